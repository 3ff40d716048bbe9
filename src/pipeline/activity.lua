-- Activity counters of one ingest batch, applied at most once per batch and read back in the
-- same atomic step (see activity.ts for the layout and the semantics).
--
-- KEYS[1]  the batch's "applied" marker; if it exists the counters already hold this batch
--          (a re-run after a crash) and only the reads happen.
-- ARGV[1]  key prefix of the per-address keys
-- ARGV[2]  JSON: [[address, needWindows, t, failedOut, solOut, counterparty, t, ...], ...]
--          one entry per address, its events sorted by block time (oldest first)
-- ARGV[3]  marker TTL in seconds
-- Returns JSON: per address [lastHour, previous7Days, tx24h, failed24h, solOut24h,
--          newCounterparties, dormantGap (-1 = none), countAfter of each event if needWindows]
local fresh = redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[3])) ~= false
local prefix = ARGV[1]
local input = cjson.decode(ARGV[2])
local floor, min, max = math.floor, math.min, math.max
local HOUR, DAY, KEY_TTL = 3600, 86400, 8 * 86400
local BASE_FIRST, BASE_LAST = 169, 2 -- previous 7 days: hours [H-169, H-2]
local CP_CAP = 2000
local results = {}

local function n(v) if v then return tonumber(v) end return nil end

for i = 1, #input do
  local item = input[i]
  local address, needWindows = item[1], item[2] == 1
  local key = prefix .. ':activity:' .. address
  local cpKey = prefix .. ':activity-cp:' .. address
  local count = (#item - 2) / 4
  local meta = redis.call('HMGET', key, 'sm', 's', 'last', 'gt', 'gs', 'ch', 'c7', 'c23', 'f23', 'o23')
  local sm, s, last, gt, gs = n(meta[1]), n(meta[2]) or 0, n(meta[3]), n(meta[4]), n(meta[5])
  local ch, c7, c23, f23, o23 = n(meta[6]), n(meta[7]) or 0, n(meta[8]) or 0, n(meta[9]) or 0, n(meta[10]) or 0
  local isNew = sm == nil
  local firstT, lastT = item[3], item[3 + (count - 1) * 4]
  -- What this batch adds, by field, for a new key (whose every field comes from this batch).
  local local_m, local_c, local_f, local_o, cpFirst = {}, {}, {}, {}, {}

  if fresh then
    local cpArgs = {}
    for e = 0, count - 1 do
      local b = 3 + e * 4
      local t, failed, out, cp = item[b], item[b + 1], item[b + 2], item[b + 3]
      local m, h = floor(t / 60), floor(t / HOUR)
      -- A minute already outside the kept window (more than an hour older than the newest
      -- seen) is not stored: nothing reads it any more.
      if sm == nil or m >= sm - 59 then
        redis.call('HINCRBY', key, 'm' .. m, 1)
        local_m[m] = (local_m[m] or 0) + 1
        if sm ~= nil and m <= sm then s = s + 1 end
      end
      if ch == nil or h >= ch - BASE_FIRST then
        redis.call('HINCRBY', key, 'c' .. h, 1)
        local_c[h] = (local_c[h] or 0) + 1
        local in7 = ch ~= nil and h >= ch - BASE_FIRST and h <= ch - BASE_LAST
        local in23 = ch ~= nil and h >= ch - 23 and h <= ch - 1
        if in7 then c7 = c7 + 1 end
        if in23 then c23 = c23 + 1 end
        if failed == 1 then
          redis.call('HINCRBY', key, 'f' .. h, 1)
          local_f[h] = (local_f[h] or 0) + 1
          if in23 then f23 = f23 + 1 end
        end
        if out > 0 then
          redis.call('HINCRBYFLOAT', key, 'o' .. h, out)
          local_o[h] = (local_o[h] or 0) + out
          if in23 then o23 = o23 + out end
        end
      end
      if cp ~= '' then
        if cpFirst[cp] == nil then cpFirst[cp] = t end
        cpArgs[#cpArgs + 1] = t
        cpArgs[#cpArgs + 1] = cp
        -- LT: a counterparty keeps the earliest time it was seen; new ones are added.
        -- (In chunks: unpack has a limit on the number of values.)
        if #cpArgs >= 2000 then
          redis.call('ZADD', cpKey, 'LT', unpack(cpArgs))
          cpArgs = {}
        end
      end
    end
    if #cpArgs > 0 then redis.call('ZADD', cpKey, 'LT', unpack(cpArgs)) end
    -- Dormancy: the longest gap before a batch's first transaction, kept for a day.
    if last ~= nil and firstT > last then
      local gap = firstT - last
      if gs == nil or gap >= gs or max(lastT, last) - gt > DAY then
        gt, gs = firstT, gap
      end
    end
    if last == nil or lastT > last then last = lastT end
  elseif last == nil then
    last = lastT
  end

  -- Per-event windows, read before old minutes are pruned below: the trailing 60 minutes at
  -- each event's minute, minus the batch's events after it in that same minute (they are in
  -- the stored counts already). The newest minute's window is the running sum, set below.
  local M = floor(last / 60)
  local windowAt = {}
  if needWindows then
    for e = 0, count - 1 do
      local m = floor(item[3 + e * 4] / 60)
      if m ~= M and windowAt[m] == nil then
        local fields = {}
        for x = m - 59, m do fields[#fields + 1] = 'm' .. x end
        local values = redis.call('HMGET', key, unpack(fields))
        local sum = 0
        for k = 1, #values do sum = sum + (n(values[k]) or 0) end
        windowAt[m] = sum
      end
    end
  end

  -- The trailing 60 minutes at the newest minute seen: s = sum of buckets [sm-59, sm].
  -- Buckets this batch created that are already out of the window (a batch spanning more
  -- than an hour) are dropped at once.
  local stale = {}
  if isNew then
    s = 0
    for m, c in pairs(local_m) do
      if m >= M - 59 then s = s + c else stale[#stale + 1] = 'm' .. m end
    end
  elseif M > sm then
    -- Buckets after sm can only come from this batch; buckets that leave the window are
    -- read once more (to subtract them) and deleted.
    for m, c in pairs(local_m) do
      if m > sm then
        if m >= M - 59 then s = s + c else stale[#stale + 1] = 'm' .. m end
      end
    end
    local gone = {}
    for m = sm - 59, min(sm, M - 60) do gone[#gone + 1] = 'm' .. m end
    if #gone > 0 then
      local values = redis.call('HMGET', key, unpack(gone))
      for k = 1, #values do s = s - (n(values[k]) or 0) end
      redis.call('HDEL', key, unpack(gone))
    end
  end
  sm = M

  -- Hour sums, cached for the current hour H and adjusted as events arrive.
  local H = floor(last / HOUR)
  local touchTtl = isNew
  if ch ~= H then
    touchTtl = true
    if isNew or ch == nil then
      c7, c23, f23, o23 = 0, 0, 0, 0
      for h, c in pairs(local_c) do
        if h >= H - BASE_FIRST and h <= H - BASE_LAST then c7 = c7 + c end
        if h >= H - 23 and h <= H - 1 then c23 = c23 + c end
        if h < H - BASE_FIRST then stale[#stale + 1] = 'c' .. h end
      end
      for h, c in pairs(local_f) do
        if h >= H - 23 and h <= H - 1 then f23 = f23 + c end
        if h < H - 23 then stale[#stale + 1] = 'f' .. h end
      end
      for h, c in pairs(local_o) do
        if h >= H - 23 and h <= H - 1 then o23 = o23 + c end
        if h < H - 23 then stale[#stale + 1] = 'o' .. h end
      end
    else
      local old = {}
      for h = ch - BASE_FIRST, min(H - BASE_FIRST - 1, ch - BASE_FIRST + 200) do old[#old + 1] = 'c' .. h end
      for h = ch - 23, min(H - 24, ch + 24) do
        old[#old + 1] = 'f' .. h
        old[#old + 1] = 'o' .. h
      end
      if #old > 0 then redis.call('HDEL', key, unpack(old)) end
      local fields = {}
      for h = H - BASE_FIRST, H - BASE_LAST do fields[#fields + 1] = 'c' .. h end
      for h = H - 23, H - 1 do
        fields[#fields + 1] = 'c' .. h
        fields[#fields + 1] = 'f' .. h
        fields[#fields + 1] = 'o' .. h
      end
      local values = redis.call('HMGET', key, unpack(fields))
      c7, c23, f23, o23 = 0, 0, 0, 0
      for k = 1, 168 do c7 = c7 + (n(values[k]) or 0) end
      for k = 169, #values, 3 do
        c23 = c23 + (n(values[k]) or 0)
        f23 = f23 + (n(values[k + 1]) or 0)
        o23 = o23 + (n(values[k + 2]) or 0)
      end
      -- Counterparties: keep the most recently first-seen ones when there are too many.
      redis.call('ZREMRANGEBYRANK', cpKey, 0, -(CP_CAP + 1))
    end
    ch = H
  end
  for k = 1, #stale, 200 do redis.call('HDEL', key, unpack(stale, k, min(k + 199, #stale))) end
  local cH, fH, oH
  if isNew then
    cH, fH, oH = local_c[H] or 0, local_f[H] or 0, local_o[H] or 0
  else
    local now = redis.call('HMGET', key, 'c' .. H, 'f' .. H, 'o' .. H)
    cH, fH, oH = n(now[1]) or 0, n(now[2]) or 0, n(now[3]) or 0
  end

  local metaOut = { 'sm', sm, 's', s, 'last', last, 'ch', ch, 'c7', c7, 'c23', c23, 'f23', f23, 'o23', o23 }
  if gt ~= nil then
    metaOut[#metaOut + 1] = 'gt'; metaOut[#metaOut + 1] = gt
    metaOut[#metaOut + 1] = 'gs'; metaOut[#metaOut + 1] = gs
  end
  redis.call('HSET', key, unpack(metaOut))
  if touchTtl then
    redis.call('EXPIRE', key, KEY_TTL)
    redis.call('EXPIRE', cpKey, KEY_TTL)
  end

  local fresh_cp = 0
  if isNew and fresh then
    -- Every counterparty of a new address is first seen in this batch.
    for _, t in pairs(cpFirst) do
      if t > last - HOUR then fresh_cp = fresh_cp + 1 end
    end
  else
    fresh_cp = redis.call('ZCOUNT', cpKey, '(' .. (last - HOUR), '+inf')
  end
  local dormant = -1
  if gt ~= nil and last - gt <= DAY then dormant = gs end
  local out = { s, c7, c23 + cH, f23 + fH, o23 + oH, fresh_cp, dormant }

  if needWindows then
    windowAt[M] = s
    local laterSameMinute = {}
    local counts = {}
    for e = count - 1, 0, -1 do
      local m = floor(item[3 + e * 4] / 60)
      local later = laterSameMinute[m] or 0
      counts[e + 1] = max(1, windowAt[m] - later)
      laterSameMinute[m] = later + 1
    end
    for e = 1, count do out[#out + 1] = counts[e] end
  end
  results[i] = out
end

return cjson.encode(results)
