-- lease: ARGV[4] seq, ARGV[5] want. Grants min(want, free); 0 asks the
-- others to give back (want = now). A grant that empties the pool, or a
-- lease that finds it empty, is told on the pool channel. Returns the
-- units granted.
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
local free = num(redis.call('HGET', POOL, 'free'))
local g = math.min(tonumber(ARGV[5]), free)
if g > 0 then
  redis.call('HINCRBY', POOL, 'free', fmt(-g))
  redis.call('HINCRBY', LEASES, MEMBER, fmt(g))
  redis.call('HDEL', DRY, MEMBER)
else
  redis.call('HSET', POOL, 'want', string.sub(now_us(), 1, -4))
end
pool_moved(free, g == 0)
redis.call('HSET', OPS, MEMBER, ARGV[4] .. ':lease:' .. ARGV[5] .. ':' .. fmt(g))
return g
