// No Docker engine here: the compose file and the Dockerfile are checked by parsing them,
// and every service's environment is run through the real loadConfig.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig, loadJwtConfig } from "../../src/config.ts";

type Healthcheck = { test: string[] | string; interval?: string; retries?: number };
type Service = {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Healthcheck;
  restart?: string;
  stop_grace_period?: string;
  networks?: Record<string, { ipv4_address?: string }>;
};

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** Compose's `${NAME:-default}` and `${NAME}` with nothing set: what a fresh checkout gets. */
function interpolate(text: string): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_, _name: string, fallback?: string) => fallback ?? "");
}

const compose = parse(interpolate(read("docker-compose.yml")), { merge: true }) as {
  services: Record<string, Service>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string; ip_range?: string }> } }>;
};
const services = compose.services;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const containerPorts = (s: Service) => (s.ports ?? []).map((p) => Number(p.split(":").at(-1)));
const healthcheckText = (s: Service) => [s.healthcheck?.test ?? []].flat().join(" ");
const scriptOf = (s: Service) => s.command?.find((part) => part.startsWith("src/bin/"));

// Every variable loadConfig reads, from its source: the list cannot drift from the code.
const CONFIG_VARIABLES = new Set([...read("src/config.ts").matchAll(/\b(?:read|optional)\("([A-Z0-9_]+)"/g)].map((m) => m[1]!));
const ENV_EXAMPLE = read(".env.example");

const DEMO_VARIABLES = new Set([...read("src/bin/demo.ts").matchAll(/process\.env\.(DEMO_[A-Z0-9_]+)/g)].map((m) => m[1]!));
const LONG_RUNNING = ["postgres", "redis", "mailpit", "api", "worker", "feed"];
/** Kept running through a failure and a reboot: the service itself. The feed is not. */
const RESTARTED = ["postgres", "redis", "mailpit", "api", "worker"];
const APP_SERVICES = ["migrate", "api", "worker", "feed"];

describe("docker-compose.yml", () => {
  it("has exactly the services postgres, redis, mailpit, migrate, api, worker and feed", () => {
    expect(Object.keys(services).sort()).toEqual(["api", "feed", "mailpit", "migrate", "postgres", "redis", "worker"]);
  });

  it("runs Redis with the append-only file on and the noeviction policy", () => {
    const command = service("redis").command!.join(" ");
    expect(command).toMatch(/--appendonly yes\b/);
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
  });

  it("gives mailpit SMTP on 1025 and its web UI on 8025, and the worker sends to it", () => {
    expect(containerPorts(service("mailpit")).sort()).toEqual([1025, 8025]);
    expect(service("worker").environment?.SMTP_URL).toBe("smtp://mailpit:1025");
  });

  it("runs migrate once, and starts api and worker only after it completed", () => {
    const migrate = service("migrate");
    expect(migrate.restart).toBe("no");
    expect(scriptOf(migrate)).toBe("src/bin/migrate.ts");
    expect(migrate.depends_on?.postgres?.condition).toBe("service_healthy");
    for (const name of ["api", "worker"]) {
      expect(service(name).depends_on?.migrate?.condition, name).toBe("service_completed_successfully");
      expect(service(name).depends_on?.redis?.condition, name).toBe("service_healthy");
    }
    expect(service("feed").depends_on?.api?.condition).toBe("service_healthy");
  });

  it("calls PostgreSQL healthy only once it accepts TCP connections, as migrate, api and worker connect", () => {
    // On a first start the image's entrypoint runs its setup on a temporary server that
    // listens on the Unix socket only; pg_isready without -h asks that socket and says
    // ready, then the temporary server stops and migrate's TCP connection is refused.
    const test = [service("postgres").healthcheck?.test ?? []].flat();
    expect(test).toContain("pg_isready");
    expect(test[test.indexOf("-h") + 1]).toBe("127.0.0.1");
  });

  it("gives every long-running service a healthcheck, and the service's own a restart policy", () => {
    for (const name of LONG_RUNNING) expect(healthcheckText(service(name)).length, name).toBeGreaterThan(0);
    for (const name of RESTARTED) expect(service(name).restart, name).toBe("unless-stopped");
    expect(healthcheckText(service("postgres"))).toContain("pg_isready");
    expect(healthcheckText(service("redis"))).toContain("ping");
  });

  it("publishes the API and the worker's metrics on the ports their configuration uses, and both healthchecks ask /readyz", () => {
    const api = service("api");
    expect(containerPorts(api)).toEqual([Number(api.environment?.PORT)]);
    expect(healthcheckText(api)).toContain(`http://127.0.0.1:${api.environment?.PORT}/readyz`);
    const worker = service("worker");
    expect(containerPorts(worker)).toEqual([Number(worker.environment?.WORKER_METRICS_PORT)]);
    expect(healthcheckText(worker)).toContain(`http://127.0.0.1:${worker.environment?.WORKER_METRICS_PORT}/readyz`);
    // Published on loopback only: a user's machine does not expose the stack to its network.
    for (const name of Object.keys(services)) {
      for (const port of service(name).ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it("lets api and worker finish their graceful stop before Docker's SIGKILL", () => {
    // The API drains for up to 20 s, then closes its pool (up to 5 s); the worker gives
    // active jobs 20 s (a webhook's 15 s timeout after its 3 s DNS check), then closes its
    // channels and pool (up to 5 s). Docker's own default is 10 s.
    for (const name of ["api", "worker"]) {
      const grace = /^(\d+)s$/.exec(service(name).stop_grace_period ?? "")?.[1];
      expect(Number(grace), name).toBeGreaterThanOrEqual(25);
    }
  });

  it("runs the demo feed once per start: a feed that exits on an error is not started over and over", () => {
    // It inherits x-app's unless-stopped unless it sets its own: an exit 1 (a refusal, a seed
    // the api refused) became a restart loop.
    expect(service("feed").restart).toBe("no");
  });

  it("runs the demo feed attached to the api service, with a sink the worker can reach", () => {
    const feed = service("feed");
    expect(scriptOf(feed)).toBe("src/bin/demo.ts");
    expect(feed.environment?.DEMO_API_URL).toBe(`http://api:${service("api").environment?.PORT}`);
    const sinkPort = feed.environment?.DEMO_SINK_LISTEN?.split(":")[1];
    expect(feed.environment?.DEMO_SINK_URL).toBe(`http://feed:${sinkPort}/hooks/risk-alerts`);
  });

  it("runs existing entry points of the image built from this repository", () => {
    for (const name of APP_SERVICES) {
      const s = service(name);
      expect(s.build, name).toBe(".");
      const script = scriptOf(s);
      expect(script, name).toBeDefined();
      expect(existsSync(new URL(`../../${script}`, import.meta.url)), `${name}: ${script}`).toBe(true);
    }
  });

  it("sets only variables that loadConfig reads and .env.example documents", () => {
    for (const name of APP_SERVICES) {
      for (const variable of Object.keys(service(name).environment ?? {})) {
        // DEMO_* belong to the demo command, which reads them itself (src/bin/demo.ts).
        const reader = variable.startsWith("DEMO_") ? DEMO_VARIABLES : CONFIG_VARIABLES;
        expect(reader.has(variable), `${name}: ${variable} is not read by loadConfig or the demo`).toBe(true);
        expect(ENV_EXAMPLE, `${name}: ${variable} is missing from .env.example`).toMatch(new RegExp(`^#? ?${variable}=`, "m"));
      }
    }
  });

  it("gives api and worker an environment that loadConfig accepts, with the admin surfaces on", () => {
    const api = loadConfig(service("api").environment);
    expect(api.port).toBe(3000);
    expect(api.admin.user).toBeTruthy();
    expect(api.smtpUrl).toBe("smtp://mailpit:1025");
    const worker = loadConfig(service("worker").environment, { worker: true });
    expect(worker.workerMetricsPort).toBe(9464);
    expect(worker.databaseUrl).toBe(api.databaseUrl);
    expect(worker.redisUrl).toBe(api.redisUrl);
    expect(loadJwtConfig(service("feed").environment).secret).toBe(api.jwt.secret);
  });
});

describe("docker-compose.yml's webhook guard", () => {
  it("is opened for the feed's one fixed address on the network's fixed subnet, and nothing else", () => {
    const subnet = compose.networks?.default?.ipam?.config?.[0]?.subnet;
    expect(subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    const feedAddress = service("feed").networks?.default?.ipv4_address;
    expect(feedAddress).toBeDefined();
    const config = loadConfig(service("worker").environment);
    expect(config.webhookAllowedCidrs).toEqual([`${feedAddress}/32`]);
    const toBits = (ip: string) => ip.split(".").map((part) => Number(part).toString(2).padStart(8, "0")).join("");
    // Dynamic addresses come from ip_range only, which must not hold the feed's.
    const range = compose.networks?.default?.ipam?.config?.[0]?.ip_range;
    expect(range).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    const [rangeStart, rangeBits] = range!.split("/");
    expect(toBits(feedAddress!).slice(0, Number(rangeBits))).not.toBe(toBits(rangeStart!).slice(0, Number(rangeBits)));
    // The address lies in the subnet (the same leading bits).
    const [network, bits] = subnet!.split("/");
    expect(toBits(feedAddress!).slice(0, Number(bits))).toBe(toBits(network!).slice(0, Number(bits)));
    // The API checks webhook URLs at creation with the same guard.
    expect(loadConfig(service("api").environment).webhookAllowedCidrs).toEqual(config.webhookAllowedCidrs);
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const dockerignore = read(".dockerignore").split("\n").map((line) => line.trim());

  it("is multi-stage: dependencies from the lock file, then a runtime stage as a non-root user", () => {
    const stages = [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);
    expect(stages).toEqual(["deps", "runtime"]);
    expect(dockerfile).toMatch(/\bnpm ci\b/);
    expect(dockerfile).toMatch(/COPY --from=deps /);
    const user = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1];
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
  });

  it("runs as a numeric user and group, other than root's: with runAsNonRoot the kubelet refuses a user given by name", () => {
    const user = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1];
    expect(user).toMatch(/^\d+:\d+$/);
    expect(user!.split(":").map(Number).every((id) => id > 0)).toBe(true);
  });

  it("installs every package that src/ imports: the image omits devDependencies", () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev\b/);
    const { dependencies } = JSON.parse(read("package.json")) as { dependencies: Record<string, string> };
    const imports = readdirSync(new URL("../../src", import.meta.url), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith(".ts"))
      .flatMap((path) =>
        [...read(`src/${path}`).matchAll(/(?:^import|^export|\bfrom)\s+"([^".][^"]*)";$/gm)]
          .map((m) => m[1]!)
          .filter((specifier) => !specifier.startsWith("node:"))
          // "@scope/name/sub" and "name/sub" belong to the packages "@scope/name" and "name".
          .map((specifier) => ({ path, name: specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/") })),
      );
    expect(imports.map((i) => i.name)).toContain("bullmq");
    expect(imports.filter((i) => !(i.name in dependencies)).map((i) => `${i.name} (src/${i.path})`)).toEqual([]);
  });

  it("copies only paths that exist and that .dockerignore lets through", () => {
    const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(new URL(`../../${source}`, import.meta.url)), source).toBe(true);
      expect(dockerignore, source).not.toContain(source);
    }
  });
});
