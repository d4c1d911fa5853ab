-- wrk script for bench/server_load.py: POST /v1/check, each request with the next device token
-- of this thread's share (env INKLING_TOKENS: tokens separated by commas).
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

bad = 0
function response(status, headers, body)
    if status ~= 200 then bad = bad + 1 end
end

function done(summary, latency, requests)
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status
    io.write(string.format("RESULT requests=%d seconds=%.3f p50_ms=%.3f p99_ms=%.3f errors=%d\n",
        summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors))
end
