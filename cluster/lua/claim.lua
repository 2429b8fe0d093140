-- claim: KEYS[1] is the members' numbers, <prefix>:member_numbers (not an
-- item's key: common.lua's names of KEYS are unused here); ARGV[2] is '0'
-- (no item), ARGV[3] the member, ARGV[4] its number (the position of its
-- id in its --cluster-members, which its order ids carry). The hash maps
-- 'number:<n>' -> id and 'member:<id>' -> n. The claim is written when
-- neither is taken, and is a no-op when both already say so (a restart).
-- Refused, nothing written, when n is another member's or the member holds
-- another number: two members minting the same order ids. Replies
-- {status, holder of n or '', number the member held or ''}, status 1 if
-- claimed now, 0 if it held it already, -1 if refused.
local NUMBERS, N = KEYS[1], ARGV[4]
local holder = redis.call('HGET', NUMBERS, 'number:' .. N) or ''
local mine = redis.call('HGET', NUMBERS, 'member:' .. MEMBER) or ''
if (holder ~= '' and holder ~= MEMBER) or (mine ~= '' and mine ~= N) then
  return {-1, holder, mine}
end
if holder == MEMBER and mine == N then
  return {0, holder, mine}
end
redis.call('HSET', NUMBERS, 'number:' .. N, MEMBER, 'member:' .. MEMBER, N)
return {1, holder, mine}
