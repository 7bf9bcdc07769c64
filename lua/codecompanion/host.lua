-- The Python host: started by the plugin itself as an RPC job, restarted when it dies.
-- Messages go out with rpcnotify only. The one wait is M.request (:checkhealth): vim.wait for
-- the host's answer notification, bounded by a timeout. Completion uses M.request_async.
local M = {}

local state =
  { chan = nil, ready = false, restarts = 0, last_exit = nil, mode = nil, last_stderr = nil }

local function root()
  local source = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

M.root = root

--- The log file the host and this module write.
---@return string
function M.log_path()
  return vim.fs.joinpath(vim.fn.stdpath("log"), "codecompanion.log")
end

---@param lines string[]
local function append_log(lines)
  local text = table.concat(lines, "\n")
  if text == "" then
    return
  end
  local fd = io.open(M.log_path(), "a")
  if fd then
    fd:write(text, "\n")
    fd:close()
  end
end

--- Append lines to the log file (what a one-line message had to cut).
---@param lines string[]
function M.log(lines)
  append_log(lines)
end

--- The host's interpreter: `python` of setup(), else the plugin's .venv.
---@return string
function M.python()
  local opts = require("codecompanion.config").options
  if opts.python and opts.python ~= "" then
    return vim.fn.expand(opts.python)
  end
  return vim.fs.joinpath(root(), ".venv", "bin", "python")
end

---@param msg string
local function notify_error(msg)
  vim.schedule(function()
    require("codecompanion.notify").notify(msg, "error")
  end)
end

---@param data string[] lines the host wrote to stderr
local function on_stderr(_, data)
  append_log(data)
  for _, line in ipairs(data) do
    if vim.trim(line) ~= "" then
      state.last_stderr = vim.trim(line)
    end
  end
end

--- The job's host exited: say why when it was not asked to, and detach the open chats.
---@param code integer
local function on_exit(_, code)
  local was_ready = state.ready
  state.chan, state.ready = nil, false
  state.last_exit = code
  if vim.v.exiting ~= vim.NIL then
    return -- Neovim is quitting: the host goes with it, quietly
  end
  if not was_ready then
    -- It died before serving anything: most likely a missing dependency in the venv.
    notify_error(
      ("host failed to start: run `make install` in %s (%s; log: %s)"):format(
        root(),
        state.last_stderr or ("exit " .. code),
        M.log_path()
      )
    )
  elseif code ~= 0 then
    notify_error(
      ("host exited (%d); it restarts on the next command. Log: %s"):format(code, M.log_path())
    )
  end
  vim.schedule(function()
    require("codecompanion.chat_buffers").on_host_exit()
  end)
end

--- Start the host as an RPC job of this Neovim; its channel, or nil when it cannot start.
---@return integer?
local function start_job()
  local python = M.python()
  if vim.fn.executable(python) ~= 1 then
    notify_error(
      ("no Python at %s: run `make install` in %s (log: %s)"):format(python, root(), M.log_path())
    )
    return nil
  end
  local opts = require("codecompanion.config").options
  local env = {
    PYTHONPATH = vim.fs.joinpath(root(), "rplugin", "python3")
      .. (vim.env.PYTHONPATH and (":" .. vim.env.PYTHONPATH) or ""),
    CODECOMPANION_LOG = M.log_path(),
    CODECOMPANION_LOG_LEVEL = opts.log_level or "INFO",
    CODECOMPANION_HOST_NICE = tostring(opts.host_nice or 3),
    -- glibc gives each thread (checkpoints worker, probes) its own malloc arena, ~1.4 MB
    -- resident after a chat; two arenas are enough for a host that mostly awaits.
    MALLOC_ARENA_MAX = vim.env.MALLOC_ARENA_MAX or "2",
    -- glibc keeps 128 KiB spare above the heap and gives memory back only past 128 KiB more:
    -- a host that mostly waits returns what an answer freed (~0.3 MiB after a chat's first
    -- answer, for a few hundred more system calls per answer: well under a millisecond).
    MALLOC_TOP_PAD_ = vim.env.MALLOC_TOP_PAD_ or "0",
    MALLOC_TRIM_THRESHOLD_ = vim.env.MALLOC_TRIM_THRESHOLD_ or "65536",
    -- The host caches its own modules' bytecode beside them (as pip does for the venv's),
    -- even where the user's shell sets PYTHONDONTWRITEBYTECODE: without the cache every
    -- start and a chat's first exchange compile each module again (~100 ms of CPU).
    PYTHONDONTWRITEBYTECODE = "",
  }
  local chan = vim.fn.jobstart({ python, "-m", "codecompanion.nvim" }, {
    rpc = true,
    env = env,
    -- Not the project: `python -m` puts the cwd first on sys.path, and a project's own
    -- httpx.py (or codecompanion.py) must never be imported by the host.
    cwd = vim.fs.joinpath(root(), "rplugin", "python3"),
    on_stderr = on_stderr,
    on_exit = on_exit,
  })
  if chan <= 0 then
    notify_error(("could not start %s (log: %s)"):format(python, M.log_path()))
    return nil
  end
  return chan
end

---@return integer?
local function rplugin_channel()
  local ok, chan = pcall(vim.fn["remote#host#Require"], "python3")
  if not ok or not chan or chan <= 0 then
    notify_error(
      "classic python3 host unavailable: run :UpdateRemotePlugins and check :checkhealth provider"
    )
    return nil
  end
  return chan
end

--- The channel of a running host, starting one when needed; nil if it cannot start.
---@return integer?
function M.ensure()
  if state.chan then
    return state.chan
  end
  local opts = require("codecompanion.config").options
  state.mode = opts.host
  local restarted = state.last_exit ~= nil
  if opts.host == "rplugin" then
    state.chan = rplugin_channel()
  else
    state.chan = start_job()
  end
  if state.chan and restarted then
    state.restarts = state.restarts + 1
    require("codecompanion.notify").notify("host restarted", "warn")
  end
  if state.chan then
    vim.rpcnotify(state.chan, "codecompanion", "hello", {
      channel = state.chan,
      options = require("codecompanion.config").for_python(),
    })
    require("codecompanion.buffers").track(state.chan)
  end
  return state.chan
end

--- Send a notification to the host (never blocks Neovim).
---@param method string
---@param args? table
---@return boolean sent
function M.notify(method, args)
  local chan = M.ensure()
  if not chan then
    return false
  end
  local ok, err = pcall(vim.rpcnotify, chan, "codecompanion", method, args or vim.empty_dict())
  if not ok then
    state.chan = nil
    notify_error("host unreachable: " .. tostring(err))
  end
  return ok
end

local replies = { next = 0, values = {}, callbacks = {} }

--- Ask the host and wait for its answer, at most `timeout_ms` (default 2 s): never an
--- rpcrequest, so a stuck host cannot freeze Neovim. Only for questions the user asked
--- for and waits on (:checkhealth); never on a typing path (see `request_async`).
---@param method string
---@param args? table
---@param timeout_ms? integer
---@return any value, string? err
function M.request(method, args, timeout_ms)
  if not M.ensure() then
    return nil, "host not running"
  end
  replies.next = replies.next + 1
  local rid = replies.next
  M.notify("request", { rid = rid, method = method, args = args or vim.empty_dict() })
  local done = vim.wait(timeout_ms or 2000, function()
    return replies.values[rid] ~= nil
  end, 5)
  local value = replies.values[rid]
  replies.values[rid] = nil
  if not done then
    return nil, ("the host did not answer %s in time (log: %s)"):format(method, M.log_path())
  end
  if type(value) == "table" and value.error and value.error ~= vim.NIL then
    return nil, value.error
  end
  return value, nil
end

--- Ask the host without waiting: `callback(value, err)` runs when it answers (or after
--- `timeout_ms`, default 2 s, with an error). For everything on a typing path (completion).
---@param method string
---@param args? table
---@param callback fun(value: any, err: string?)
---@param timeout_ms? integer
function M.request_async(method, args, callback, timeout_ms)
  if not M.ensure() then
    callback(nil, "host not running")
    return
  end
  replies.next = replies.next + 1
  local rid = replies.next
  local timer = vim.uv.new_timer()
  replies.callbacks[rid] = function(value)
    replies.callbacks[rid] = nil
    timer:stop()
    timer:close()
    if type(value) == "table" and value.error and value.error ~= vim.NIL then
      return callback(nil, value.error)
    end
    callback(value, nil)
  end
  timer:start(
    timeout_ms or 2000,
    0,
    vim.schedule_wrap(function()
      if replies.callbacks[rid] then
        replies.callbacks[rid] = nil
        timer:close()
        callback(nil, ("the host did not answer %s in time"):format(method))
      end
    end)
  )
  M.notify("request", { rid = rid, method = method, args = args or vim.empty_dict() })
end

--- The host's answer to `M.request` or `M.request_async` (called by the host).
---@param rid integer
---@param value any
function M.reply(rid, value)
  local callback = replies.callbacks[rid]
  if callback then
    callback(value)
    return
  end
  replies.values[rid] = value == nil and vim.NIL or value
end

--- Called by the host once it serves requests.
function M.ready()
  state.ready = true
end

--- The running host's channel, or nil.
---@return integer?
function M.channel()
  return state.chan
end

--- Whether the host runs, how often it restarted, its last exit code and its mode.
---@return { running: boolean, restarts: integer, last_exit?: integer, mode?: string }
function M.status()
  return {
    running = state.chan ~= nil,
    restarts = state.restarts,
    last_exit = state.last_exit,
    mode = state.mode,
  }
end

--- Stop the host (a job host; the classic rplugin host is Neovim's).
function M.stop()
  if state.chan and state.mode ~= "rplugin" then
    pcall(vim.fn.jobstop, state.chan)
  end
  state.chan = nil
end

return M
