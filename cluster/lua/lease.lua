-- lease: ARGV[4] seq, ARGV[5] want. Grants min(want, free); 0 asks the
-- others to give back (want = now). Returns the units granted.
local refused = member_check()
if refused then
  return refused
end
local st, v = op_check('lease', ARGV[4], ARGV[5])
if st == 'replay' then
  return tonumber(v)
elseif st == 'err' then
  return redis.error_reply(v)
end
local g = math.min(tonumber(ARGV[5]), num(redis.call('HGET', POOL, 'free')))
if g > 0 then
  redis.call('HINCRBY', POOL, 'free', fmt(-g))
  redis.call('HINCRBY', LEASES, MEMBER, fmt(g))
  redis.call('HDEL', DRY, MEMBER)
else
  local t = redis.call('TIME')
  redis.call('HSET', POOL, 'want', fmt(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
end
redis.call('HSET', OPS, MEMBER, ARGV[4] .. ':lease:' .. ARGV[5] .. ':' .. fmt(g))
return g
