-- dry: ARGV[4] local units of the member. 0: a dry report (sold out once
-- the pool and every member are empty); more: units are back (reopens).
-- Returns {sold_out 0/1, version}.
local refused = member_check()
if refused then
  return refused
end
if ARGV[4] == '0' then
  redis.call('HSET', DRY, MEMBER, '1')
  settle()
else
  redis.call('HDEL', DRY, MEMBER)
  if redis.call('HGET', POOL, 'sold_out') == '1' then
    set_sold_out(false)
  end
end
local p = redis.call('HMGET', POOL, 'sold_out', 'version')
return {num(p[1]), num(p[2])}
