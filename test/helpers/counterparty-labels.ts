// The labelled counterparties the differential tests (chaos, reference model) start from: one
// of each kind of factor a label can raise, and two labels that raise none.
export const COUNTERPARTY_LABELS = [
  { category: "sanctioned", score: 100 },
  { category: "mixer", score: 90 },
  { category: "scam", score: 70 },
  { category: "flagged", score: 60 },
  { category: "exchange", score: 20 },
  { category: "gambling", score: 55 },
] as const;
