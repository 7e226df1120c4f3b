-- The scripting sandbox, run once when a thread's Lua state is made.
--
-- Arguments: the globals table G, the bridge table (filled per run by the server with
-- `call`, the function that runs one command), and the helpers written in Rust.
-- Returns the environment scripts run in.
--
-- Read-only, as in Redis 7: scripts see G and every library table (string, table,
-- math, redis, cjson, cmsgpack, bit) through proxies that refuse every write ("Attempt
-- to modify a readonly table"); what getmetatable returns for them, and for strings,
-- is an empty table that refuses writes too. No raw table of the sandbox is reachable
-- from a script, so nothing a script does outlives it, and every run starts from the
-- same state. An undefined global is an error to read. Chunks made by loadstring (a
-- Rust function, installed after this file runs) are text only and get the same
-- environment.
--
-- While a library's code runs for FUNCTION LOAD, the environment is another, as in
-- Redis 7: its only global is `redis`, holding `register_function`, `log`, the log
-- levels and the version; reading anything else of either is the nonexistent-global
-- error. The functions the library registers run in the scripts' environment (its
-- `redis` has no `register_function`).
--
-- Bounds that stock Lua 5.1 lacks: unpack refuses bounds outside a C int and counts
-- that overflow one (stock Lua overran its stack; its own check then refuses more
-- results than the stack takes), string.rep refuses a result past the interpreter's
-- memory bound before building it (and an empty string repeated costs nothing), and
-- the pattern functions refuse patterns that would make the matcher recurse too
-- deep. pcall and xpcall raise a kill (SCRIPT KILL, FUNCTION KILL, the FUNCTION LOAD
-- time limit) again when they catch it, so a script that catches errors still ends.
local G, bridge, helpers = ...
local error, type, tostring, rawget, rawset = error, type, tostring, rawget, rawset
local setmetatable, getmetatable, pcall, xpcall = setmetatable, getmetatable, pcall, xpcall
local next, pairs, ipairs, unpack, select = next, pairs, ipairs, unpack, select
local tonumber, floor, ceil = tonumber, math.floor, math.ceil
local lower = string.lower
local where, killed, pattern = helpers.where, helpers.killed, helpers.pattern
local memory = helpers.memory

-- Returns its arguments (a wrapper calls the wrapped function through it, not as a
-- tail call, so Lua's argument errors still name the function).
local function pass(...)
  return ...
end

-- Tables scripts may not change, and the table each proxy stands for.
local readonly = {}
local behind = {}

local function deny()
  error('Attempt to modify a readonly table', 2)
end

-- What getmetatable returns for a protected table: an empty table that refuses
-- writes (and whose own metatable is hidden).
local function view()
  local v = setmetatable({}, { __newindex = deny, __metatable = false })
  readonly[v] = true
  return v
end

-- A read-only proxy of `t`, and the proxy's metatable.
local function protect(t)
  local meta = { __index = t, __newindex = deny, __metatable = view() }
  local proxy = setmetatable({}, meta)
  readonly[proxy] = true
  behind[proxy] = t
  return proxy, meta
end

-- Reading a global that does not exist is an error, as Redis has it.
local function missing(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
setmetatable(G, { __index = missing })

-- The scripts' environment; while a library loads, its reads go to the library
-- environment instead (`bridge.load`).
local env, envmeta = protect(G)

-- Functions that would reach outside the sandbox or around the read-only tables.
for _, name in ipairs({ 'loadfile', 'dofile', 'print', 'load', 'getfenv', 'setfenv',
                        'module', 'require', 'newproxy', 'gcinfo' }) do
  rawset(G, name, nil)
end

rawset(G, 'setmetatable', function(t, m)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  return setmetatable(t, m)
end)
rawset(G, 'rawset', function(t, k, v)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  return rawset(t, k, v)
end)
-- Reads see through a proxy to the table it stands for (whose values are proxies or
-- functions), as they see a read-only table in Redis.
rawset(G, 'rawget', function(t, k)
  local v = rawget(behind[t] or t, k)
  return v
end)
local function seen_next(t, k)
  return next(behind[t] or t, k)
end
rawset(G, 'next', seen_next)
rawset(G, 'pairs', function(t)
  if behind[t] then return seen_next, t, nil end
  local f, s, c = pairs(t)
  return f, s, c
end)
local function seen_inext(t, i)
  i = i + 1
  local v = rawget(behind[t], i)
  if v ~= nil then return i, v end
end
rawset(G, 'ipairs', function(t)
  if behind[t] then return seen_inext, t, 0 end
  local f, s, c = ipairs(t)
  return f, s, c
end)

-- unpack with its bounds checked before Lua's own code sees them (Lua 5.1 converts
-- them to C ints and computes the count in one: a range like -2^31 .. 2^31-1, or a
-- bound past 2^31, crashed the interpreter).
local function toint(x)
  if x >= 0 then return floor(x) end
  return ceil(x)
end
-- The arguments go on as given: Lua's own check counts them against the room for
-- the results, so a wrapper passing nils for absent bounds would take room away.
rawset(G, 'unpack', function(...)
  local t, i, j = ...
  if type(t) == 'table' then
    local a = i == nil and 1 or tonumber(i)
    local b = j == nil and #t or tonumber(j)
    if a and b then
      a, b = toint(a), toint(b)
      if a ~= a or b ~= b then error('too many results to unpack', 2) end
      if a > b then return end
      -- Lua converts the bounds to C ints: outside that range the conversion itself
      -- is undefined (the count came out positive and unchecked, and the stack was
      -- overrun).
      if b - a >= 2147483647 or a < -2147483648 or b > 2147483647 then
        error('too many results to unpack', 2)
      end
    end
  end
  return unpack(...)
end)

-- pcall and xpcall as Redis 7 has them: an error table raised by redis.call is
-- caught as its text, and a kill is not caught: it ends the script.
local function caught(ok, ...)
  if not ok then
    local e = ...
    if killed() then error(e, 0) end
    if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
      return false, rawget(e, 'err')
    end
  end
  return ok, ...
end
-- The protected call's results come back packed in one table and are unpacked
-- here: Lua 5.1's pcall and xpcall push their status after the callee's results with
-- no room check, which overflows the stack when a callee returns as many values as
-- the stack holds.
local function pack(...)
  return { n = select('#', ...), ... }
end
local function outcome(ok, r)
  if ok then return true, unpack(r, 1, r.n) end
  return caught(false, r)
end
rawset(G, 'pcall', function(f, ...)
  if type(f) ~= 'function' then return caught(pcall(f, ...)) end
  local args = pack(...)
  return outcome(pcall(function() return pack(f(unpack(args, 1, args.n))) end))
end)
rawset(G, 'xpcall', function(f, h)
  if type(f) ~= 'function' then return caught(xpcall(f, h)) end
  return outcome(xpcall(function() return pack(f()) end, h))
end)

-- The library tables, with the functions that write tables refusing read-only ones
-- and the string functions bounded (see the file's note).
local tbl = rawget(G, 'table')
local insert, remove, sort = tbl.insert, tbl.remove, tbl.sort
-- Lua's insert and remove shift the elements between the position and the end one
-- by one in C, where the instruction hook can't stop them: a position far from the
-- end (or outside a C int, whose conversion is undefined) would hold the server for
-- minutes. More than 2^24 moves are refused.
local MOVES = 16777216
local function far(t, pos)
  if type(t) ~= 'table' then return false end
  pos = tonumber(pos)
  if pos == nil then return false end
  pos = toint(pos)
  if pos ~= pos or pos < -2147483648 or pos > 2147483647 then return true end
  return #t - pos > MOVES
end
tbl.insert = function(t, ...)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  if select('#', ...) >= 2 and far(t, (...)) then
    error('table.insert: position too far from the end', 2)
  end
  return pass(insert(t, ...))
end
tbl.remove = function(t, ...)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  if select('#', ...) >= 1 and far(t, (...)) then
    error('table.remove: position too far from the end', 2)
  end
  return pass(remove(t, ...))
end
tbl.sort = function(t, ...)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  return pass(sort(t, ...))
end

local str = rawget(G, 'string')
local find, match, gmatch, gsub, rep = str.find, str.match, str.gmatch, str.gsub, str.rep
str.find = function(s, p, ...)
  if not select(2, ...) then pattern(p) end
  return pass(find(s, p, ...))
end
str.match = function(s, p, ...)
  pattern(p)
  return pass(match(s, p, ...))
end
str.gmatch = function(s, p, ...)
  pattern(p)
  return pass(gmatch(s, p, ...))
end
str.gsub = function(s, p, ...)
  pattern(p)
  return pass(gsub(s, p, ...))
end
str.rep = function(s, n, ...)
  -- Numbers stand for their text, as Lua converts them.
  local text, count = s, tonumber(n)
  if type(s) == 'number' then text = tostring(s) end
  if type(text) == 'string' and count and count >= 1 then
    if #text == 0 then return '' end
    if #text * count > memory() then error('not enough memory', 2) end
  end
  return pass(rep(s, n, ...))
end
-- Strings index the raw string table (scripts only see it through the proxy); their
-- metatable is hidden behind a read-only view.
local strmeta = getmetatable('')
strmeta.__metatable = view()

for _, lib in ipairs({ 'string', 'table', 'math', 'cjson', 'bit', 'cmsgpack', 'struct' }) do
  if rawget(G, lib) then rawset(G, lib, protect(rawget(G, lib))) end
end

local redis = {}
for k, v in pairs(helpers.redis) do redis[k] = v end
-- The arguments go to the bridge as one table (a Rust function takes fewer
-- arguments than a script may pass: `redis.call('LPUSH', k, unpack(t))`).
redis.call = function(...)
  local v, failed = bridge.call({ n = select('#', ...), ... })
  if failed then error(v, 0) end
  return v
end
redis.pcall = function(...)
  return (bridge.call({ n = select('#', ...), ... }))
end
-- Whether the caller's user may run the command with these arguments (its keys and
-- channels included); an error for a name that is no command.
redis.acl_check_cmd = function(...)
  local v, failed = bridge.acl_check({ n = select('#', ...), ... })
  if failed then error(v, 0) end
  return v
end
redis.error_reply = function(msg)
  if type(msg) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  if msg:sub(1, 1) == '-' then msg = msg:sub(2) end
  if not msg:find(' ', 1, true) then msg = 'ERR ' .. msg end
  return { err = msg }
end
redis.status_reply = function(msg)
  if type(msg) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  return { ok = msg }
end
redis.setresp = function(v)
  if v ~= 2 and v ~= 3 then error('RESP version must be 2 or 3.', 2) end
  bridge.resp = v
end
redis.replicate_commands = function() return true end
redis.set_repl = function(v)
  if type(v) ~= 'number' or v < 0 or v > 3 then
    error('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.', 2)
  end
end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3

rawset(G, 'redis', protect(redis))
rawset(G, '_G', env)

-- redis.register_function, with Redis's argument checks and texts. The arguments
-- checked go to `bridge.register` (set only while FUNCTION LOAD runs a library's
-- code), which answers the text of an error, or nothing.
local FLAGS = { 'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys' }

local function fail(msg)
  error({ err = 'ERR ' .. msg })
end

-- What Lua converts to a string: strings and numbers.
local function stringy(v)
  local t = type(v)
  return t == 'string' or t == 'number'
end

-- The flags of the list `t` (read up to its first nil), by their names in FLAGS'
-- order, each once; nil when one is not a flag (names are matched ignoring case).
local function read_flags(t)
  local given = {}
  local i = 1
  while true do
    local f = t[i]
    if f == nil then break end
    if not stringy(f) then return nil end
    local name = lower(f)
    local known = false
    for _, flag in ipairs(FLAGS) do
      if flag == name then known = true end
    end
    if not known then return nil end
    given[name] = true
    i = i + 1
  end
  local out = {}
  for _, flag in ipairs(FLAGS) do
    if given[flag] then out[#out + 1] = flag end
  end
  return out
end

-- The table form: function_name, callback, description, flags (keys ignoring case).
local function named(t)
  if type(t) ~= 'table' then
    fail('calling redis.register_function with a single argument is only applicable to '
      .. 'Lua table (representing named arguments).')
  end
  local name, callback, description, flags
  for k, v in next, t do
    if not stringy(k) then
      fail('named argument key given to redis.register_function is not a string')
    end
    local key = lower(k)
    if key == 'function_name' then
      if not stringy(v) then
        fail('function_name argument given to redis.register_function must be a string')
      end
      name = v
    elseif key == 'description' then
      if not stringy(v) then
        fail('description argument given to redis.register_function must be a string')
      end
      description = v
    elseif key == 'callback' then
      if type(v) ~= 'function' then
        fail('callback argument given to redis.register_function must be a function')
      end
      callback = v
    elseif key == 'flags' then
      if type(v) ~= 'table' then
        fail('flags argument to redis.register_function must be a table representing '
          .. 'function flags')
      end
      flags = read_flags(v)
      if flags == nil then fail('unknown flag given') end
    else
      fail('unknown argument given to redis.register_function')
    end
  end
  if name == nil then fail('redis.register_function must get a function name argument') end
  if callback == nil then fail('redis.register_function must get a callback argument') end
  return name, callback, flags or {}, description
end

local function register_function(...)
  local add = bridge.register
  if add == nil then
    fail('redis.register_function can only be called on FUNCTION LOAD command')
  end
  local n = select('#', ...)
  if n < 1 or n > 2 then fail('wrong number of arguments to redis.register_function') end
  local name, callback, flags, description
  if n == 1 then
    name, callback, flags, description = named((...))
  else
    name, callback = ...
    if not stringy(name) then fail('first argument to redis.register_function must be a string') end
    if type(callback) ~= 'function' then
      fail('second argument to redis.register_function must be a function')
    end
    flags = {}
  end
  if description ~= nil then description = tostring(description) end
  local err = add(tostring(name), callback, flags, description)
  if err ~= nil then fail(err) end
end

-- The library environment: `redis` with what a library may use while it loads.
local libredis = setmetatable({}, { __index = missing })
libredis.register_function = register_function
libredis.log = redis.log
libredis.LOG_DEBUG, libredis.LOG_VERBOSE = redis.LOG_DEBUG, redis.LOG_VERBOSE
libredis.LOG_NOTICE, libredis.LOG_WARNING = redis.LOG_NOTICE, redis.LOG_WARNING
libredis.REDIS_VERSION = redis.REDIS_VERSION
libredis.REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM
local library_env = setmetatable({ redis = (protect(libredis)) }, { __index = missing })

-- What an error that ends a script becomes: a table with the reply's text and the
-- line of the script it was raised at.
local function handler(e)
  local line = where()
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
    return { err = rawget(e, 'err'), line = line }
  end
  return { err = 'ERR ' .. tostring(e), line = line }
end

-- Runs a compiled script (no arguments) or a function (with KEYS and ARGV).
-- Only the first value a script returns is its reply (and only one goes through
-- xpcall, for the reason given at pcall above).
bridge.run = function(f, keys, argv)
  if keys == nil then
    return xpcall(function() return (f()) end, handler)
  end
  return xpcall(function() return (f(keys, argv)) end, handler)
end

-- Runs a library's compiled code (FUNCTION LOAD) in the library environment; the
-- scripts' environment is back once it returned, whatever it did.
bridge.load = function(f)
  envmeta.__index = library_env
  local ok, e = xpcall(function() return (f()) end, handler)
  envmeta.__index = G
  return ok, e
end

return env
