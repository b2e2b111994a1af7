// In-memory state shared between pages for this tab (cleared on reload).

/** "name/version" → last inspection response (the Graph page marks its NaN/Inf nodes). */
export const inspections = new Map();

export const key = (name, version) => `${name}/${version || ""}`;
