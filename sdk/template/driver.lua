-- SPDX-License-Identifier: Apache-2.0
-- The Lua driver: one long-lived lua5.3 per context speaking the replhost worker protocol
-- (docs/worker-protocol.md). Requests arrive on fd 3 and events leave on fd 4 as
-- "<length>\n<json>" frames; fd 1 and fd 2 are the user's output, read by the host as raw bytes.
-- Every execution is a chunk run in the one global environment, so globals, functions and
-- loaded modules persist (a `local` of a chunk ends with it, as in Lua's own REPL).
--
-- Interrupts: luaposix runs a Lua function for SIGINT, but it reports and swallows any error
-- that function raises. So the function only arms a count hook while user code runs, and that
-- hook raises the interrupt at the next instruction of the user's code. Idle, SIGINT does
-- nothing. A blocking call that the signal interrupts (posix.unistd.sleep) returns and the hook
-- fires; a C function that retries its call after a signal, and a coroutine that never yields
-- (hooks are per coroutine), are left to the host's kill ladder. A command run with os.execute
-- dies of the SIGINT sent to the process group, and the cell then stops too.

local unistd = require "posix.unistd"
local fcntl = require "posix.fcntl"
local signal = require "posix.signal"
local stdlib = require "posix.stdlib"
local errno = require "posix.errno"
local systime = require "posix.sys.time"
local json = require "dkjson"

local REQUESTS, EVENTS = 3, 4
local PROTOCOL = 1
local INTERRUPT = setmetatable({}, {__tostring = function() return "interrupted" end})
local EXIT = {}

local object_mt = {__jsontype = "object"}
local function object(t) return setmetatable(t or {}, object_mt) end

for _, fd in ipairs({REQUESTS, EVENTS}) do
  fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
end
-- Marks go to saved duplicates of fd 1 and 2, so a user who redirects io.stdout loses none.
local mark_fds = {unistd.dup(1), unistd.dup(2)}
for _, fd in ipairs(mark_fds) do fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC) end

-- ------------------------------------------------------------------ framing

local function write_all(fd, data)
  local offset = 1
  while offset <= #data do
    local written, message, code = unistd.write(fd, data:sub(offset))
    if not written then
      if code ~= errno.EINTR then error("write failed: " .. tostring(message)) end
    else
      offset = offset + written
    end
  end
end

-- The host parses events as UTF-8 JSON: invalid bytes (a binary string's repr) become U+FFFD.
local function valid_utf8(s)
  local parts = {}
  while true do
    local _, bad = utf8.len(s)
    if not bad then break end
    parts[#parts + 1] = s:sub(1, bad - 1) .. utf8.char(0xFFFD)
    s = s:sub(bad + 1)
  end
  parts[#parts + 1] = s
  return table.concat(parts)
end

local function scrub(value)
  if type(value) == "string" then return valid_utf8(value) end
  if type(value) == "table" then
    local copy = setmetatable({}, getmetatable(value))
    for k, v in pairs(value) do copy[k] = scrub(v) end
    return copy
  end
  return value
end

local function send(event)
  local body = json.encode(scrub(event))
  write_all(EVENTS, #body .. "\n" .. body)
end

local pending = ""

-- Reads exactly n bytes of requests, or nil at end of file (the host is gone).
local function read_bytes(n)
  while #pending < n do
    local chunk, message, code = unistd.read(REQUESTS, 65536)
    if chunk == nil then
      if code ~= errno.EINTR then error("read failed: " .. tostring(message)) end
    elseif chunk == "" then
      return nil
    else
      pending = pending .. chunk
    end
  end
  local bytes = pending:sub(1, n)
  pending = pending:sub(n + 1)
  return bytes
end

local function read_frame()
  local header = ""
  while true do
    local byte = read_bytes(1)
    if byte == nil then return nil end
    if byte == "\n" then break end
    header = header .. byte
    if not header:match("^%d+$") or #header > 10 then error("bad frame header") end
  end
  local body = read_bytes(tonumber(header))
  if body == nil then return nil end
  local request, _, message = json.decode(body)
  if type(request) ~= "table" then error("bad frame body: " .. tostring(message)) end
  return request
end

-- ------------------------------------------------------------------ marks

local mark_prefix, mark_seq = "", 0

local function flush_std()
  io.stdout:flush()
  io.stderr:flush()
end

-- Flushes the user's buffers, then writes the next mark to both output pipes (protocol 5).
local function write_mark()
  flush_std()
  mark_seq = mark_seq + 1
  local mark = mark_prefix .. mark_seq .. "\7"
  for _, fd in ipairs(mark_fds) do write_all(fd, mark) end
  return mark_seq
end

local function emit_marked(event)
  event.mark = write_mark()
  send(event)
end

-- ------------------------------------------------------------------ values

local function repr(value, depth, seen)
  depth, seen = depth or 0, seen or {}
  if type(value) == "string" then return string.format("%q", value) end
  if type(value) ~= "table" or getmetatable(value) and getmetatable(value).__tostring then
    return tostring(value)
  end
  if seen[value] or depth >= 2 then return "{...}" end
  seen[value] = true
  local parts, count = {}, 0
  for i, v in ipairs(value) do
    count = count + 1
    if count > 20 then parts[#parts + 1] = "..."; break end
    parts[#parts + 1] = repr(v, depth + 1, seen)
  end
  local keys = {}
  for k in pairs(value) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #value) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    count = count + 1
    if count > 20 then parts[#parts + 1] = "..."; break end
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. repr(k, 2) .. "]"
    parts[#parts + 1] = key .. " = " .. repr(value[k], depth + 1, seen)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function repr_all(values)
  local parts = {}
  for i = 1, values.n do parts[i] = repr(values[i]) end
  return table.concat(parts, "\t")
end

-- ------------------------------------------------------------------ env and cwd

local function apply_env(change)
  if type(change) ~= "table" then return end
  for key, value in pairs(change.set or {}) do stdlib.setenv(key, value) end
  for _, key in ipairs(change.unset or {}) do stdlib.setenv(key, nil) end
end

-- Applies the execution's own layer and returns what restores it.
local function apply_exec_env(change)
  if type(change) ~= "table" then return {} end
  local saved = {}
  for key in pairs(change.set or {}) do saved[key] = {os.getenv(key)} end
  for _, key in ipairs(change.unset or {}) do saved[key] = {os.getenv(key)} end
  apply_env(change)
  return saved
end

local function restore_env(saved)
  for key, value in pairs(saved) do stdlib.setenv(key, value[1]) end
end

-- ------------------------------------------------------------------ interrupts

local executing = false

local function interrupt_hook()
  debug.sethook()
  if executing then error(INTERRUPT, 0) end
end

signal.signal(signal.SIGINT, function()
  if executing then debug.sethook(interrupt_hook, "", 1) end
end)

-- A command writes to fd 1 and 2 directly: what the cell printed before it must come first.
local popen = io.popen
io.popen = function(...)
  flush_std()
  return popen(...)
end

-- os.execute ignores SIGINT while it waits, so a loop of commands would outlive every interrupt:
-- a command killed by SIGINT stops the cell, as in a terminal.
local system = os.execute
os.execute = function(...)
  flush_std()
  local ok, how, code = system(...)
  if executing and how == "signal" and code == signal.SIGINT then error(INTERRUPT, 0) end
  return ok, how, code
end

-- os.exit ends the cell, not the worker (like Python's SystemExit in its driver).
os.exit = function(code)
  local status = code
  if code == nil or code == true then status = 0 elseif code == false then status = 1 end
  error({[EXIT] = status}, 0)
end

-- ------------------------------------------------------------------ executions

local function now_ms()
  local tv = systime.gettimeofday()
  return tv.tv_sec * 1000 + tv.tv_usec // 1000
end

-- Keeps the traceback's frames of the user's cells and drops the driver's.
local function traceback(message)
  local lines = {}
  for line in debug.traceback("", 2):gmatch("[^\n]+") do
    if line:match("^%s+cell ") then lines[#lines + 1] = line end
  end
  return {message = message, frames = lines}
end

local function compile(code, count)
  local name = "=cell " .. count
  -- An expression's value is the result, as in Lua's own REPL.
  local chunk = load("return " .. code, name, "t")
  if chunk then return chunk end
  return load(code, name, "t")
end

local function run_user(chunk)
  executing = true
  local values = table.pack(xpcall(chunk, traceback))
  executing = false
  debug.sethook()
  return values
end

local function execute(request)
  local count = math.tointeger(request.execution_count) or 0
  local env = request.env or {}
  apply_env(env.context)
  local saved = apply_exec_env(env.exec)
  local start = now_ms()
  if type(request.cwd) == "string" and request.cwd ~= "" then unistd.chdir(request.cwd) end
  send({type = "started", id = request.id, execution_count = count})

  local status = "ok"
  local chunk, syntax = compile(request.code or "", count)
  if not chunk then
    status = "error"
    emit_marked({type = "error", id = request.id, ename = "SyntaxError", evalue = syntax,
                 traceback = {syntax}})
  else
    -- Two layers: an interrupt hook that fires between the inner call's end and the reset of
    -- `executing` is caught by the outer one.
    local guarded, values = pcall(run_user, chunk)
    executing = false
    debug.sethook()
    if not guarded then values = {n = 2, false, {message = values, frames = {}}} end
    if values[1] then
      if values.n > 1 and values[2] ~= nil then
        emit_marked({type = "result", id = request.id, execution_count = count,
                     data = object({["text/plain"] = repr_all(table.pack(table.unpack(values, 2, values.n)))}),
                     metadata = object()})
      end
    else
      local failure = values[2]
      local message = failure.message
      if message == INTERRUPT then
        status = "interrupted"
        emit_marked({type = "error", id = request.id, ename = "Interrupt",
                     evalue = "interrupted", traceback = failure.frames})
      elseif type(message) == "table" and message[EXIT] ~= nil then
        if message[EXIT] ~= 0 then
          status = "error"
          emit_marked({type = "error", id = request.id, ename = "Exit",
                       evalue = "os.exit(" .. tostring(message[EXIT]) .. ")", traceback = {}})
        end
      else
        status = "error"
        local text = type(message) == "string" and message or repr(message)
        local lines = {text}
        for _, frame in ipairs(failure.frames) do lines[#lines + 1] = frame end
        emit_marked({type = "error", id = request.id, ename = "LuaError", evalue = text,
                     traceback = lines})
      end
    end
  end

  restore_env(saved)
  local done = {type = "done", id = request.id, status = status, execution_count = count,
                cwd = unistd.getcwd(), duration_ms = now_ms() - start}
  emit_marked(done)
end

local baseline = {}
for name in pairs(_G) do baseline[name] = true end

local function variables(request)
  local limit = tonumber(request.max_repr) or 200
  local list = {}
  for name, value in pairs(_G) do
    if type(name) == "string" and not baseline[name] then
      local text = repr(value)
      if #text > limit then text = text:sub(1, limit) .. "..." end
      list[#list + 1] = {name = name, type = type(value), repr = text}
    end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  send({type = "variables_reply", id = request.id, variables = list})
end

-- ------------------------------------------------------------------ main loop

local function serve()
  while true do
    local request = read_frame()
    if request == nil then return end
    local kind = request.type
    if kind == "init" then
      mark_prefix = "\27]5253;rh;" .. tostring(request.mark_nonce) .. ";"
      send({type = "hello", id = request.id, protocol = PROTOCOL, language = "lua",
            language_version = _VERSION:match("%d+%.%d+"), implementation = "PUC-Rio Lua",
            pid = unistd.getpid(),
            capabilities = object({interrupt = {"signal"}, complete = false, variables = true,
                                   display = {"text/plain"}})})
    elseif kind == "execute" then
      execute(request)
    elseif kind == "variables" then
      variables(request)
    elseif kind == "shutdown" then
      flush_std()
      send({type = "shutdown_reply", id = request.id})
      return
    elseif kind ~= "interrupt" then
      -- An interrupt between runs targets nothing; SIGINT already did what it could.
      send({type = "error_reply", id = request.id, reason = "unknown request type"})
    end
  end
end

local ok, failure = pcall(serve)
flush_std()
if not ok then
  pcall(send, {type = "log", level = "error", message = "driver failed: " .. tostring(failure)})
  io.stderr:write("replhost lua driver: ", tostring(failure), "\n")
  unistd._exit(1)
end
unistd._exit(0)
