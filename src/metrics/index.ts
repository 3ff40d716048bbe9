// What other modules use: the registry, the worker's job metrics and its /metrics server.
export { createMetricsRegistry } from "./registry.ts";
export { createJobMetrics, WORKER_METRICS_OPTIONS, type JobMetrics, type JobOutcome, type JobRun } from "./job-metrics.ts";
export { startMetricsServer, type MetricsServer } from "./metrics-server.ts";
export { createEvaluationMetrics, type EvaluationMetrics } from "./evaluation-metrics.ts";
export { createDeliveryMetrics, type DeliveryMetrics, type AttemptOutcome } from "./delivery-metrics.ts";
export { registerClockOffsetGauge } from "./clock-metrics.ts";
