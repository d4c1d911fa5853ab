-- wrk script for bench/server_load.py: POST /v1/check, each request with the next device token
-- of this thread's share (env INKLING_TOKENS: tokens separated by commas). Counts the answers by
-- status in each thread, so the report tells non-200 answers from wrk's socket errors.
local tokens = {}
for token in string.gmatch(os.getenv("INKLING_TOKENS") or "", "[^,]+") do tokens[#tokens + 1] = token end
local counter = 0
local threads = {}
local body = '{"sentence":"I saw teh cat.","language":"en","flags":[{"start":6,"end":9,"word":"teh","replacements":["the"]}]}'

function setup(thread)
    table.insert(threads, thread)
end

function request()
    counter = counter + 1
    local token = tokens[(counter % #tokens) + 1]
    return wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end

-- Answers by status in this thread (string keys: wrk copies them between its Lua states).
statuses = {}
function response(status, headers, body)
    local key = tostring(status)
    statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, requests)
    local totals = {}
    for _, thread in ipairs(threads) do
        for status, count in pairs(thread:get("statuses") or {}) do
            totals[status] = (totals[status] or 0) + count
        end
    end
    local non200 = 0
    local parts = {}
    for status, count in pairs(totals) do
        if status ~= "200" then non200 = non200 + count end
        parts[#parts + 1] = status .. ":" .. count
    end
    table.sort(parts)
    local e = summary.errors
    io.write(string.format(
        "RESULT requests=%d seconds=%.3f p50_ms=%.3f p99_ms=%.3f connect=%d read=%d write=%d timeout=%d non200=%d statuses=%s\n",
        summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        e.connect, e.read, e.write, e.timeout, non200, table.concat(parts, ",")))
end
