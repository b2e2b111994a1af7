-- wrk script for bench/server/run.py: POST one fixed body, report JSON at the end.
--   WRK_BODY   path of the request body file (read once, sent on every request)
--   WRK_CTYPE  Content-Type (default application/json)
--   WRK_HLEN   if set: Inference-Header-Content-Length (Triton binary tensor extension)
--   WRK_PATH   request path
-- done() prints one line "WRKJSON {...}" with requests, duration, errors and latency
-- percentiles in microseconds; run.py parses that line.
local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

wrk.method = "POST"
wrk.path = os.getenv("WRK_PATH") or "/"
wrk.body = read_file(assert(os.getenv("WRK_BODY"), "WRK_BODY not set"))
wrk.headers["Content-Type"] = os.getenv("WRK_CTYPE") or "application/json"
local hlen = os.getenv("WRK_HLEN")
if hlen ~= nil and hlen ~= "" then
  wrk.headers["Inference-Header-Content-Length"] = hlen
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests": %d, "duration_us": %d, "bytes": %d, "errors": {"connect": %d, ' ..
    '"read": %d, "write": %d, "status": %d, "timeout": %d}, "latency_us": {"mean": %.1f, ' ..
    '"stdev": %.1f, "max": %d, "p50": %d, "p90": %d, "p99": %d, "p999": %d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency.mean, latency.stdev, latency.max, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
