-- Activity counters of an evaluation (one or more ingest batches), each batch's events applied
-- at most once and read back in the same atomic step (see activity.ts for the layout and the
-- semantics). The hot state of an
-- address is one small msgpack string (read for all addresses with one MGET, written back
-- with one SET each), so a batch costs about two Redis calls per address; the hour buckets
-- and the counterparty set are touched once per address per hour of activity.
--
-- An evaluation's batches are steps, applied in turn: each step's results are as of its own
-- events and those of the steps before it, as if the step were a call of its own.
--
-- KEYS     the "counted" markers of the batches: one bit per address bucket. An event whose
--          (batch, bucket) bit is set already is in the counters (a re-run after a crash) and
--          is only read. Then, batch for batch, the batches' answer hashes: per bucket, what
--          counting the batch's events answered for each address of the bucket. A re-run
--          answers with that: the counters hold the later batches of the lost run by then (and
--          any counted since), so reading them would judge the earlier batches by the later
--          ones' transactions: a burst's crossing of unusual_activity's limit could be jumped.
-- ARGV[1]  key prefix of the per-address keys
-- ARGV[2]  msgpack: [[address, needWindows, n, t, kind, solOut, sentTo, receivedFrom,
--          marker, t, ... (n events), n, ... (the next step's)], ...] one entry per address, the
--          steps it is in, in order, each step's events sorted by block time (oldest first);
--          kind is 1 when the address sent it and it failed, plus 2 (SENT) when the address
--          sent it (its own transaction: what ends a silence, see the dormancy below);
--          marker is an index into ARGV[4]; sentTo are the event's other sides the address sent
--          to (failed sends too), receivedFrom those it only received from, each by a prefix of
--          CP_LENGTH characters, run together ('' when none). Both go into the remembered set;
--          only sentTo ones not in it yet are new counterparties (src/domain/risk/dealings.ts).
--          The input format is not part of a batch's marker or answers: a re-run reads the
--          answers stored by the first run, whatever format that run was called with.
-- ARGV[3]  marker TTL in seconds
-- ARGV[4]  JSON: [[key index, bucket], ...] the (batch, bucket) pairs of this call
-- ARGV[5]  how many of KEYS are markers (the answer hashes follow, in the same order)
-- Returns msgpack: per address, per step it is in: [lastHour, previous7Days, tx24h,
--          failed24h, solOut24h, newCounterparties, dormantGap (-1 = none), then if needWindows
--          lastHourBefore (the trailing 60 minutes at the newest minute seen before the step,
--          without the step's events: unusual_activity's judgment at the newest minute, see
--          transaction-firings.ts), countAfter of each event, previous7Days of each event's
--          own hour, the newest minute seen before the step (-1 = none): a transaction not
--          newer than it is late, and fires nothing while that minute's trailing hour is over
--          the limit already (an answer stored without it, by an older version, reads as none),
--          and previous7Days of that minute's own hour (-1 = none): the limit that the verdict
--          at the newest minute before the step was judged by, which unusual_activity's next
--          verdict is compared with (the limit moves at each hour boundary; an answer stored
--          without it reads as none)]
-- The two large arguments go as msgpack, not JSON: cjson formats every number it writes
-- with printf and parses every one with strtod, about a tenth of the script's time.
local markerCount = tonumber(ARGV[5])
local markerPairs = cjson.decode(ARGV[4])
local fresh = {}
for k, pair in ipairs(markerPairs) do fresh[k] = redis.call('SETBIT', KEYS[pair[1]], pair[2], 1) == 0 end
for k = 1, markerCount do redis.call('EXPIRE', KEYS[k], tonumber(ARGV[3])) end
local prefix = ARGV[1]
local input = cmsgpack.unpack(ARGV[2])
local floor, min, max = math.floor, math.min, math.max
local HOUR, DAY = 3600, 86400
-- KEY_TTL (8 days), LAST_TTL, CP_KEY_TTL, CP_CAP and CP_LENGTH are set by the line activity.ts
-- puts before this script, from its exported constants, so the reseed writes the same values.
-- The newest send's block time outlives the other keys: dormant_reactivation needs a silence
-- of 90 days or more, and with the hot state gone after 8 days every wake-up looked like a
-- first transaction (no gap, no factor). LAST_TTL is three years: any shorter silence is seen.
-- The counterparty set outlives the other keys too: new_counterparty_burst counts addresses
-- the wallet never dealt with, and kept 8 days a payroll paying the same payees every two
-- weeks (or monthly, quarterly) saw them all as new each time. CP_KEY_TTL, 100 days, covers a quarterly
-- cycle with room; a set holds at most about 1,000 prefixes of 12 characters (~48 KB in
-- Redis 7.0, where it is a hashtable past 128 members; ~1 KB for a dozen payees).
local BASE_FIRST, BASE_LAST = 169, 2 -- previous 7 days: hours [H-169, H-2]
local CP_KEEP = math.floor(CP_CAP / 2) -- what a set past CP_CAP (counterparties remembered) keeps
local NONE = -1
local META = 16                         -- state: 16 numbers, then (minute, count, new) triples
-- A state written before the newest send was kept has 15 numbers (its length a multiple of 3,
-- a state of 16 is not): its newest block time of any transaction stands in for the newest
-- send, as it was measured then.
local LEGACY_META = 15
local EVENT, MARKER = 6, 5              -- fields per event in ARGV[2], and the marker's offset
local SENT = 2                          -- an event's kind (ARGV[2]): 1 if a failed send, plus SENT if a send
local CP_TTL, HOURS_TTL, STATE_TTL = 1, 2, 4 -- state flags: that key exists and has its expiry set
local results = {}

-- SOL sums (o23, oH and the o<hour> buckets) are added to the lamport, as addSol in
-- src/domain/risk/lamports.ts: each side rounded to whole lamports (exact below 2^22 SOL), the
-- whole numbers added, and the double nearest to the exact sum kept. Plain double sums drift
-- (ten sends totalling 100 SOL summed to 99.99999999999999), and large_outflow's cut-off is
-- exact. The stored values stay SOL, so sums written before this rule read the same (and
-- their drift, far below half a lamport, is rounded away when they are next added to).
local LAMPORTS = 1e9
local function addSol(a, b)
  return (floor(a * LAMPORTS + 0.5) + floor(b * LAMPORTS + 0.5)) / LAMPORTS
end

-- A counterparty set past CP_CAP keeps CP_KEEP of its members, at random.
local function trimCounterparties(cpKey)
  local size = redis.call('SCARD', cpKey)
  if size > CP_CAP then redis.call('SPOP', cpKey, size - CP_KEEP) end
end

-- A key gets its expiry when first written and again once an hour (not on every write);
-- `flags` records which keys have theirs. Returns the new flags.
local function expireOnce(key, flags, flag, ttl)
  if flags % (2 * flag) < flag then
    redis.call('EXPIRE', key, ttl)
    return flags + flag
  end
  return flags
end

local function hdel(key, fields)
  for k = 1, #fields, 1000 do redis.call('HDEL', key, unpack(fields, k, min(k + 999, #fields))) end
end

-- A step's counterparties of one address can run to thousands (a payout of many legs), more
-- than unpack can pass to one call; returns how many were new.
local function sadd(key, members)
  local added = 0
  for k = 1, #members, 1000 do added = added + redis.call('SADD', key, unpack(members, k, min(k + 999, #members))) end
  return added
end

-- Adds the counterparties of `run` (prefixes run together) to `list`, those not in `dealt` yet.
local function collect(list, dealt, run)
  for at = 1, #run, CP_LENGTH do
    local one = string.sub(run, at, at + CP_LENGTH - 1)
    if dealt[one] == nil then
      dealt[one] = true
      list[#list + 1] = one
    end
  end
end

-- Per (batch, bucket) pair: what this call answers for the events it counts (kept below), and
-- what an earlier call answered for events it finds counted already (read once per pair).
local answered, earlier = {}, {}
local function earlierAnswer(k, address)
  if earlier[k] == nil then
    local pair = markerPairs[k]
    local blob = redis.call('HGET', KEYS[markerCount + pair[1]], tostring(pair[2]))
    earlier[k] = blob and cmsgpack.unpack(blob) or false
  end
  return earlier[k] and earlier[k][address] or nil
end

local stateKeys = {}
for i = 1, #input do stateKeys[i] = prefix .. ':activity:' .. input[i][1] end
local states = {}
for k = 1, #stateKeys, 1000 do
  local got = redis.call('MGET', unpack(stateKeys, k, min(k + 999, #stateKeys)))
  for j = 1, #got do states[k + j - 1] = got[j] end
end

for i = 1, #input do
  local item = input[i]
  local address, needWindows = item[1], item[2] == 1
  local hourKey = prefix .. ':activity-h:' .. address
  local cpKey = prefix .. ':activity-cp:' .. address
  local lastKey = prefix .. ':activity-last:' .. address

  -- The state: sm s sn last gt gs ch c7 c23 f23 o23 cH fH oH flags ls, then the minute buckets.
  local st = states[i] and cmsgpack.unpack(states[i]) or nil
  local isNew = st == nil
  local last, gt, gs, ch, c7, c23, f23, o23, cH, fH, oH
  -- ls: the newest block time of a send (nil: none known); lsKept: what its key holds.
  local ls, lsKept
  local flags = 0
  local mc, mn = {}, {} -- minute -> transactions, counterparties first seen
  if isNew then
    c7, c23, f23, o23, cH, fH, oH = 0, 0, 0, 0, 0, 0, 0
  else
    last, gt, gs, ch = st[4], st[5], st[6], st[7]
    if gt == NONE then gt, gs = nil, nil end
    c7, c23, f23, o23, cH, fH, oH, flags = st[8], st[9], st[10], st[11], st[12], st[13], st[14], st[15]
    local meta = META
    if #st % 3 == 0 then
      meta = LEGACY_META
      ls = last
    elseif st[16] ~= NONE then
      ls = st[16]
    end
    lsKept = ls
    for k = meta + 1, #st, 3 do
      mc[st[k]] = st[k + 1]
      if st[k + 2] > 0 then mn[st[k]] = st[k + 2] end
    end
  end
  local wrote = false
  local rows = {}
  local p = 3
  -- The trailing 60 minutes at the newest minute seen: stored with the state (its first two
  -- numbers, the minute and the sum), then each step's own sum, for the step after it.
  local hourAtNewest = nil
  if st ~= nil and last ~= nil and st[1] == floor(last / 60) then hourAtNewest = st[2] end
  while p <= #item do
    local count, first = item[p], p + 1
    p = first + count * EVENT
    -- The trailing 60 minutes at the newest minute seen before the step: what unusual_activity's
    -- judgment at the newest minute starts from (summed only when not known already).
    local lastHourBefore = 0
    local newestMinuteBefore, previous7DaysBefore = NONE, NONE
    -- c7 is the cached sum of the newest hour seen, the hour of `last`, until the step moves it.
    if last ~= nil then newestMinuteBefore, previous7DaysBefore = floor(last / 60), c7 end
    if needWindows and last ~= nil then
      if hourAtNewest ~= nil then
        lastHourBefore = hourAtNewest
      else
        local before = floor(last / 60) - 59
        for m, c in pairs(mc) do
          if m >= before then lastHourBefore = lastHourBefore + c end
        end
      end
    end
    -- The events to add: those whose batch marker was set just now, oldest first.
    local adds = {}
    for e = 0, count - 1 do
      local b = first + e * EVENT
      if fresh[item[b + MARKER]] then adds[#adds + 1] = b end
    end
    local adding = #adds > 0
    local lastT
    if adding then lastT = item[adds[#adds]] end
    local hourAdds = {} -- field -> amount, for hours other than the current one

    if adding then
      -- Hours only move forward: the newest hour is the current one, kept in the state.
      local H = floor(lastT / HOUR)
      if ch ~= nil and ch < H then
        -- The hour rolls over: the finished hour goes to the hour buckets.
        if cH > 0 then hourAdds['c' .. ch] = cH end
        if fH > 0 then hourAdds['f' .. ch] = fH end
        if oH > 0 then hourAdds['o' .. ch] = oH end
        cH, fH, oH = 0, 0, 0
      end
      local current = max(H, ch or H)
      -- The step's counterparties, each once, in chain order: one it received from before it
      -- sent to it (in an earlier event) goes with the remembered ones, so it is not new. Those
      -- sent to go by the minute of the event that first sent to them: a new one counts there,
      -- as its transaction does. One sent to before the last hour at the step's newest minute
      -- is only remembered: no window from that minute on reaches back to it (the newest minute
      -- only moves forward). Counted at the step's newest minute instead, a backfill of 12 sends
      -- to fresh addresses an hour apart made a burst in one batch and none one by one.
      local recentFrom = floor(max(last or lastT, lastT) / 60) - 59
      local sentAt, remembered, dealt = {}, {}, {} -- sentAt: minute -> counterparties
      for _, b in ipairs(adds) do
        local t, out = item[b], item[b + 2]
        local failed = item[b + 1] % SENT -- 1: it sent it and it failed
        local m, h = floor(t / 60), floor(t / HOUR)
        mc[m] = (mc[m] or 0) + 1
        if h == current then
          cH = cH + 1
          if failed == 1 then fH = fH + 1 end
          if out > 0 then oH = addSol(oH, out) end
        elseif h >= current - BASE_FIRST then
          hourAdds['c' .. h] = (hourAdds['c' .. h] or 0) + 1
          if failed == 1 then hourAdds['f' .. h] = (hourAdds['f' .. h] or 0) + 1 end
          if out > 0 then hourAdds['o' .. h] = addSol(hourAdds['o' .. h] or 0, out) end
          -- An older hour inside the cached sums (a late transaction) adjusts them.
          if ch == current then
            if h >= ch - BASE_FIRST and h <= ch - BASE_LAST then c7 = c7 + 1 end
            if h >= ch - 23 then
              c23 = c23 + 1
              if failed == 1 then f23 = f23 + 1 end
              if out > 0 then o23 = addSol(o23, out) end
            end
          end
        end
        -- Sent first: within one transaction, one both sent to and received from is sent to.
        if item[b + 3] ~= '' then
          if m >= recentFrom then
            local list = sentAt[m]
            if list == nil then
              list = {}
              sentAt[m] = list
            end
            collect(list, dealt, item[b + 3])
          else
            collect(remembered, dealt, item[b + 3])
          end
        end
        if item[b + 4] ~= '' then collect(remembered, dealt, item[b + 4]) end
      end
      -- Counterparties sent to and never dealt with before: one SADD per minute they were sent
      -- to in (mostly one: a live batch spans seconds), its additions that minute's new ones.
      -- The rest are only remembered (one more SADD). The lists do not overlap, so their order
      -- does not matter.
      local any = #remembered > 0
      for m, list in pairs(sentAt) do
        if #list > 0 then
          any = true
          local added = sadd(cpKey, list)
          if added > 0 then mn[m] = (mn[m] or 0) + added end
        end
      end
      if #remembered > 0 then sadd(cpKey, remembered) end
      if any then flags = expireOnce(cpKey, flags, CP_TTL, CP_KEY_TTL) end
      -- Dormancy: the longest silence before one of the batch's sends, kept for a day: before
      -- its first one, or between two of them (a backfill can span the silence). Only the
      -- address's own sends (failed ones too) end a silence: anyone can send a cold wallet dust,
      -- and a wallet that keeps receiving deposits is still silent. A state that expired (8
      -- days without any transaction) leaves the newest send's block time in its own key.
      if isNew then
        ls = tonumber(redis.call('GET', lastKey) or nil)
        lsKept = ls
      end
      for _, b in ipairs(adds) do
        if item[b + 1] >= SENT then
          local t = item[b]
          if ls ~= nil and t > ls then
            local gap = t - ls
            if gs == nil or gap >= gs or t - gt > DAY then gt, gs = t, gap end
          end
          if ls == nil or t > ls then ls = t end
        end
      end
      if last == nil or lastT > last then last = lastT end

      for field, amount in pairs(hourAdds) do
        if string.sub(field, 1, 1) == 'o' then
          redis.call('HINCRBYFLOAT', hourKey, field, amount)
        else
          redis.call('HINCRBY', hourKey, field, amount)
        end
      end
      if next(hourAdds) ~= nil then flags = expireOnce(hourKey, flags, HOURS_TTL, KEY_TTL) end
      if isNew then
        -- The set outlives the state (100 days against 8), so a state made anew may find a set
        -- that the hourly trim below has not seen since: an address active every few weeks
        -- would otherwise grow it without bound.
        trimCounterparties(cpKey)
        -- Every hour bucket of a new address comes from this batch: the sums are local.
        for field, amount in pairs(hourAdds) do
          local kind, h = string.sub(field, 1, 1), tonumber(string.sub(field, 2))
          if h >= current - 23 then
            if kind == 'c' then c23 = c23 + amount elseif kind == 'f' then f23 = f23 + amount else o23 = addSol(o23, amount) end
          end
          if kind == 'c' and h >= current - BASE_FIRST and h <= current - BASE_LAST then c7 = c7 + amount end
        end
      elseif ch ~= current then
        -- A new current hour: old buckets go, the cached sums are recomputed (once an hour),
        -- the expiries are renewed.
        flags = 0
        if redis.call('EXPIRE', hourKey, KEY_TTL) == 1 then flags = flags + HOURS_TTL end
        if redis.call('EXPIRE', cpKey, CP_KEY_TTL) == 1 then flags = flags + CP_TTL end
        local old = {}
        -- Transaction counts are kept an hour beyond the baseline's reach: a transaction an hour
        -- late has its own baseline, [h-169, h-2], an hour further back than the newest one's.
        for h = ch - BASE_FIRST - 1, min(current - BASE_FIRST - 2, ch - BASE_FIRST + 200) do old[#old + 1] = 'c' .. h end
        for h = ch - 23, min(current - 24, ch + 24) do
          old[#old + 1] = 'f' .. h
          old[#old + 1] = 'o' .. h
        end
        hdel(hourKey, old)
        trimCounterparties(cpKey)
        local names = {}
        for h = current - BASE_FIRST, current - BASE_LAST do names[#names + 1] = 'c' .. h end
        for h = current - 23, current - 1 do
          names[#names + 1] = 'c' .. h
          names[#names + 1] = 'f' .. h
          names[#names + 1] = 'o' .. h
        end
        local got = redis.call('HMGET', hourKey, unpack(names))
        c7, c23, f23, o23 = 0, 0, 0, 0
        for k = 1, 168 do c7 = c7 + (tonumber(got[k]) or 0) end
        for k = 169, #got, 3 do
          c23 = c23 + (tonumber(got[k]) or 0)
          f23 = f23 + (tonumber(got[k + 1]) or 0)
          -- A bucket holds HINCRBYFLOAT's sum of lamport-exact amounts: added to the lamport too.
          o23 = addSol(o23, tonumber(got[k + 2]) or 0)
        end
      end
      ch = current
      isNew = false
      wrote = true
    elseif last == nil then
      -- Counted before, but the state is gone: answer from the events themselves.
      last = item[first + (count - 1) * EVENT]
      ch = floor(last / HOUR)
    end

    -- The trailing 60 minutes at the newest minute seen.
    local M = floor(last / 60)
    local s, sn = 0, 0
    for m, c in pairs(mc) do
      if m >= M - 59 then s = s + c end
    end
    for m, c in pairs(mn) do
      if m >= M - 59 then sn = sn + c end
    end

    hourAtNewest = s

    local dormant = -1
    if gt ~= nil and last - gt <= DAY then dormant = gs end
    local result = { s, c7, c23 + cH, f23 + fH, addSol(o23, oH), sn, dormant }

    if needWindows then
      result[#result + 1] = lastHourBefore
      -- countAfter of each event: the trailing 60 minutes at its minute, minus the step's
      -- events after it in that same minute (they are in the counts already).
      local windowAt = { [M] = s }
      local laterSameMinute = {}
      local counts = {}
      for e = count - 1, 0, -1 do
        local m = floor(item[first + e * EVENT] / 60)
        if windowAt[m] == nil then
          local sum = 0
          for x, c in pairs(mc) do
            if x >= m - 59 and x <= m then sum = sum + c end
          end
          windowAt[m] = sum
        end
        local later = laterSameMinute[m] or 0
        counts[e + 1] = max(1, windowAt[m] - later)
        laterSameMinute[m] = later + 1
      end
      for e = 1, count do result[#result + 1] = counts[e] end
      -- The baseline of each event: the 7 days before its own hour, [h-169, h-2]. For the
      -- newest hour that is the cached sum; for an older hour of the step (a batch spanning
      -- hours, a late transaction) it is summed from the hour buckets. Measured from the newest
      -- hour instead, a burst followed in its batch by a transaction hours later raised its own
      -- baseline and crossed the limit later than the same burst in a batch of its own.
      local baselineAt = { [ch] = c7 }
      for e = 0, count - 1 do
        local h = floor(item[first + e * EVENT] / HOUR)
        if baselineAt[h] == nil then
          local names = {}
          for x = h - BASE_FIRST, h - BASE_LAST do names[#names + 1] = 'c' .. x end
          local got = redis.call('HMGET', hourKey, unpack(names))
          local sum = 0
          for k = 1, #names do sum = sum + (tonumber(got[k]) or 0) end
          baselineAt[h] = sum
        end
        result[#result + 1] = baselineAt[h]
      end
      result[#result + 1] = newestMinuteBefore
      result[#result + 1] = previous7DaysBefore
    end
    -- The step's events share one (batch, bucket) pair.
    local k = item[first + MARKER]
    if adding then
      answered[k] = answered[k] or {}
      answered[k][address] = result
    else
      local before = earlierAnswer(k, address)
      if before and (not needWindows or #before >= 8 + 2 * count) then result = before end
    end
    rows[#rows + 1] = result
    if adding then
      -- Minutes are kept for two hours back from the newest one, [M-119, M]: a transaction up
      -- to an hour late is counted against its own trailing 60 minutes, which reach an hour
      -- further back than the newest one's. Kept for one hour only, a transaction half an hour
      -- late missed the half hour before the newest window; kept from M-118, one 59 minutes 50
      -- seconds late (60 buckets behind) missed its oldest minute. Dropped after each step, not
      -- only when the state is written: a later batch of the group was otherwise judged with an
      -- earlier batch's late minutes, which a call of its own would have found gone.
      local keepFrom = floor(last / 60) - 119
      for m in pairs(mc) do
        if m < keepFrom then mc[m] = nil end
      end
      for m in pairs(mn) do
        if m < keepFrom then mn[m] = nil end
      end
    end
  end

  if wrote then
    -- The minutes left are the ones to keep (the last adding step dropped the rest, and a
    -- write means one added); stored in no particular order.
    local M = floor(last / 60)
    local s, sn = 0, 0
    local minutes = {}
    for m, c in pairs(mc) do
      minutes[#minutes + 1] = m
      if m >= M - 59 then s = s + c end
    end
    for m, c in pairs(mn) do
      if m >= M - 59 then sn = sn + c end
    end
    -- The state's own expiry, like the other keys', is set once an hour, not on every write:
    -- SET … EX costs Redis about as much again as a plain SET (KEEPTTL keeps the one it has).
    local keepTtl = flags % (2 * STATE_TTL) >= STATE_TTL
    if not keepTtl then flags = flags + STATE_TTL end
    local out = { M, s, sn, last, gt or NONE, gs or NONE, ch, c7, c23, f23, o23, cH, fH, oH, flags, ls or NONE }
    for _, m in ipairs(minutes) do
      out[#out + 1] = m
      out[#out + 1] = mc[m]
      out[#out + 1] = mn[m] or 0
    end
    -- The newest send's block time is written whenever it moves (it must be exact when the
    -- state expires), its expiry renewed with the state's, once an hour; a key written the
    -- first time gets its expiry then.
    if keepTtl then
      redis.call('SET', stateKeys[i], cmsgpack.pack(out), 'KEEPTTL')
      if ls ~= lsKept then
        if lsKept == nil then redis.call('SET', lastKey, ls, 'EX', LAST_TTL) else redis.call('SET', lastKey, ls, 'KEEPTTL') end
      end
    else
      redis.call('SET', stateKeys[i], cmsgpack.pack(out), 'EX', KEY_TTL)
      if ls ~= nil then redis.call('SET', lastKey, ls, 'EX', LAST_TTL) end
    end
  end
  results[i] = rows
end

for k, byAddress in pairs(answered) do
  local pair = markerPairs[k]
  local key = KEYS[markerCount + pair[1]]
  redis.call('HSET', key, tostring(pair[2]), cmsgpack.pack(byAddress))
  redis.call('EXPIRE', key, tonumber(ARGV[3]))
end
return cmsgpack.pack(results)
