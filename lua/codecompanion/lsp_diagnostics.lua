-- Fresh diagnostics: whether the language servers published for a buffer's current text, and
-- waiting (bounded) for their next publish after a change.
local M = {}

local SEVERITY = { ERROR = 1, WARNING = 2, INFORMATION = 3, HINT = 4 }
local NAMES = { "ERROR", "WARNING", "INFORMATION", "HINT" }
-- After a first publish, other servers attached to the buffer get this long to publish too.
local SETTLE_MS = 150

-- Per buffer: the version of the text a language server last published diagnostics for.
local published = {} ---@type table<integer, integer>
-- Per buffer: what to call when a server publishes for it next.
local waiters = {} ---@type table<integer, fun()[]>
-- Clients waited for that never published anything (a server that only completes, say): they
-- are not waited for again.
local silent = {} ---@type table<integer, boolean>
-- Clients that number their publishes with the document's version: one of theirs without a
-- number is not about the text (pylsp clears a closed document so, when Neovim reloads it).
local versioned = {} ---@type table<integer, boolean>
-- Per buffer and client: closes of the document sent by a reload whose clearing publish has not
-- come yet (servers clear a closed document's diagnostics; that empty list is not about the
-- reopened text).
local closing = {} ---@type table<integer, table<integer, integer>>
local tracking = false

--- The version of `bufnr`'s text as its servers were last told it: the changedtick of its last
--- change (a save moves the changedtick, not the text). Without a server: the changedtick.
---@param bufnr integer
---@return integer
local function current(bufnr)
  local versions = vim.lsp.util.buf_versions
  local version = type(versions) == "table" and rawget(versions, bufnr) or nil
  return type(version) == "number" and version or vim.api.nvim_buf_get_changedtick(bufnr)
end

--- A server published (or, pulled, answered) diagnostics for `bufnr`'s text of `version` (nil:
--- the server gave none, so the text as it is now): note it and wake those waiting. A publish
--- for an older text is not fresh.
---@param bufnr integer
---@param version integer?
local function heard(bufnr, version)
  if bufnr < 1 or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local now = current(bufnr)
  local text = version or now
  if text < now then
    return
  end
  published[bufnr] = math.max(published[bufnr] or 0, text)
  local list = waiters[bufnr]
  waiters[bufnr] = nil
  for _, wake in ipairs(list or {}) do
    wake()
  end
end

--- The buffer of a document `uri` names, or -1 (none is made for it).
---@param uri string?
---@return integer
local function buffer_of(uri)
  if type(uri) ~= "string" then
    return -1
  end
  return vim.fn.bufnr(vim.uri_to_fname(uri))
end

--- Whether a publish is the clearing one a reload's close of the document brings (an empty
--- list from a client a close is owed by); any other publish settles what it owed.
---@param bufnr integer
---@param client integer
---@param empty boolean
---@return boolean
local function cleared(bufnr, client, empty)
  local owed = closing[bufnr] and closing[bufnr][client] or 0
  if owed == 0 then
    return false
  end
  closing[bufnr][client] = empty and owed - 1 or 0
  return empty
end

--- Neovim is about to reload `bufnr` from its file, which closes and reopens the document for
--- each server attached: the clearing publishes that brings are not fresh diagnostics.
---@param bufnr integer
function M.reloading(bufnr)
  published[bufnr] = nil
  closing[bufnr] = closing[bufnr] or {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    closing[bufnr][client.id] = (closing[bufnr][client.id] or 0) + 1
  end
end

--- Wrap Neovim's handler of `method` so each publish is heard once it is applied. Neovim looks
--- the handler up for every message, so this takes effect for running clients too; a client
--- configured with a handler of its own is heard through DiagnosticChanged instead.
---@param method string
---@param document fun(result: table?, ctx: table): string?, integer?
local function wrap(method, document)
  local original = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(err, result, ctx, config)
    local value = original(err, result, ctx, config)
    local uri, version = document(result, ctx)
    local client = ctx and ctx.client_id or -1
    versioned[client] = versioned[client] or version ~= nil
    local bufnr = buffer_of(uri)
    local empty = result == nil or #(result.diagnostics or result.items or {}) == 0
    if
      err == nil
      and (version ~= nil or not versioned[client])
      and not cleared(bufnr, client, empty)
    then
      heard(bufnr, version)
    end
    return value
  end
end

--- Whether a DiagnosticChanged event carries diagnostics of a language server (an empty one is
--- left out: Neovim also clears a buffer's diagnostics on the spot when it reloads it).
---@param diagnostics vim.Diagnostic[]?
---@return boolean
local function from_lsp(diagnostics)
  for _, d in ipairs(diagnostics or {}) do
    local ns = d.namespace and vim.diagnostic.get_namespace(d.namespace)
    if ns and type(ns.name) == "string" and ns.name:sub(1, 8) == "vim.lsp." then
      return true
    end
  end
  return false
end

--- Start hearing the servers' publishes (idempotent; the host calls it when it connects).
function M.track()
  if tracking then
    return
  end
  tracking = true
  wrap("textDocument/publishDiagnostics", function(result)
    return result and result.uri, result and result.version
  end)
  wrap("textDocument/diagnostic", function(_, ctx)
    local doc = ctx and ctx.params and ctx.params.textDocument
    return doc and doc.uri, nil
  end)
  local group = vim.api.nvim_create_augroup("codecompanion_lsp_diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(args)
      if from_lsp((args.data or {}).diagnostics) then
        heard(args.buf, nil)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufUnload", {
    group = group,
    callback = function(args)
      published[args.buf], closing[args.buf], waiters[args.buf] = nil, nil, nil
    end,
  })
end

--- Whether the client has published diagnostics in this session (its namespace exists).
---@param client vim.lsp.Client
---@return boolean
local function has_published(client)
  local prefix = ("vim.lsp.%s.%d"):format(client.name, client.id)
  for name in pairs(vim.api.nvim_get_namespaces()) do
    if name == prefix or name:sub(1, #prefix + 1) == prefix .. "." then
      return true
    end
  end
  return false
end

--- The clients attached to `bufnr` worth waiting for.
---@param bufnr integer
---@return vim.lsp.Client[]
local function waitable(bufnr)
  local result = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if not silent[client.id] then
      table.insert(result, client)
    end
  end
  return result
end

--- Whether a language server is starting (not initialized yet): it may attach to a buffer
--- that was just loaded.
---@return boolean
local function starting()
  -- Neovim 0.11 lists a client before its initialize answer only when asked to.
  for _, client in ipairs(vim.lsp.get_clients({ _uninitialized = true })) do
    if not client.initialized and not client:is_stopped() then
      return true
    end
  end
  return false
end

--- Forget what was published for `bufnr`: a change just made to it (a reload, a save) may have
--- cleared its diagnostics on the spot, which is no server's word on the new text.
---@param bufnr integer
function M.forget(bufnr)
  published[bufnr] = nil
end

--- Whether the last publish for `bufnr` came after its current text.
---@param bufnr integer
---@return boolean
function M.is_fresh(bufnr)
  local text = published[bufnr]
  return text ~= nil and text >= current(bufnr)
end

---@class codecompanion.Freshness
---@field fresh boolean the servers published for the current text
---@field servers string[] names of the servers attached
---@field timed_out boolean waited the whole bound without a publish

--- The names of the servers attached to `bufnr`.
---@param bufnr integer
---@return string[]
local function server_names(bufnr)
  local names = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    table.insert(names, client.name)
  end
  return names
end

--- The state of `bufnr` now, for `done`.
---@param bufnr integer
---@param timed_out boolean
---@return codecompanion.Freshness
local function state_of(bufnr, timed_out)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return { fresh = false, servers = {}, timed_out = timed_out }
  end
  return { fresh = M.is_fresh(bufnr), servers = server_names(bufnr), timed_out = timed_out }
end

--- Wait for the next publish of any of `clients` for `bufnr`, at most `wait_ms`.
---@param bufnr integer
---@param clients vim.lsp.Client[]
---@param wait_ms integer
---@param done fun(result: codecompanion.Freshness)
local function next_publish(bufnr, clients, wait_ms, done)
  local timer = assert(vim.uv.new_timer())
  local finished = false
  local function finish(timed_out)
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    if timed_out then
      for _, client in ipairs(clients) do
        silent[client.id] = silent[client.id] or not has_published(client)
      end
    end
    done(state_of(bufnr, timed_out))
  end
  local function wake()
    if not M.is_fresh(bufnr) then -- the text changed again meanwhile: the next one then
      waiters[bufnr] = waiters[bufnr] or {}
      table.insert(waiters[bufnr], wake)
      return
    end
    -- One server published; others attached get a moment to follow.
    vim.defer_fn(function()
      finish(false)
    end, #clients > 1 and SETTLE_MS or 0)
  end
  waiters[bufnr] = waiters[bufnr] or {}
  table.insert(waiters[bufnr], wake)
  timer:start(wait_ms, 0, function()
    vim.schedule(function()
      finish(true)
    end)
  end)
end

--- Call `done` once the servers attached to `bufnr` published for its current text, or after
--- `wait_ms` (none attached: at once). A server still starting gets `start_ms` to attach.
---@param bufnr integer
---@param wait_ms integer
---@param start_ms integer
---@param done fun(result: codecompanion.Freshness)
function M.wait(bufnr, wait_ms, start_ms, done)
  M.track()
  local clients = waitable(bufnr)
  if #clients == 0 and start_ms > 0 and starting() then
    M.after_attach(bufnr, start_ms, function()
      M.wait(bufnr, wait_ms, 0, done)
    end)
  elseif #clients == 0 or M.is_fresh(bufnr) or wait_ms <= 0 then
    done(state_of(bufnr, false))
  else
    next_publish(bufnr, clients, wait_ms, done)
  end
end

--- Call `done` once a language server attached to `bufnr`, or after `ms`.
---@param bufnr integer
---@param ms integer
---@param done fun()
function M.after_attach(bufnr, ms, done)
  local timer = assert(vim.uv.new_timer())
  local finished = false
  local id
  local function finish()
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    pcall(vim.api.nvim_del_autocmd, id)
    done()
  end
  id = vim.api.nvim_create_autocmd("LspAttach", {
    buffer = bufnr,
    callback = function()
      vim.schedule(finish)
    end,
  })
  timer:start(ms, 0, vim.schedule_wrap(finish))
end

---@class codecompanion.Diagnostic
---@field line integer 0-based
---@field col integer 0-based
---@field severity "ERROR"|"WARNING"|"INFORMATION"|"HINT"
---@field message string
---@field source string|vim.NIL
---@field code string|vim.NIL

--- The diagnostics of `bufnr` at `min_severity` or worse.
---@param bufnr integer
---@param min_severity? string ERROR, WARNING, INFORMATION or HINT (the default: all)
---@return codecompanion.Diagnostic[]
function M.collect(bufnr, min_severity)
  local limit = SEVERITY[min_severity or "HINT"] or 4
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.severity <= limit then
      table.insert(result, {
        line = d.lnum,
        col = d.col,
        severity = NAMES[d.severity] or "HINT",
        message = d.message,
        source = d.source or vim.NIL,
        code = d.code and tostring(d.code) or vim.NIL,
      })
    end
  end
  return result
end

---@class codecompanion.ServerSeen
---@field name string
---@field root string|vim.NIL
---@field buffers integer buffers it is attached to
---@field state "running"|"starting"|"stopped"
---@field diagnostics "published"|"none seen"|"silent"

--- The language servers Neovim runs, for :checkhealth.
---@return codecompanion.ServerSeen[]
function M.servers()
  local result = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    local state = client:is_stopped() and "stopped"
      or (client.initialized and "running" or "starting")
    local said = has_published(client) and "published"
      or (silent[client.id] and "silent" or "none seen")
    table.insert(result, {
      name = client.name,
      root = client.root_dir or vim.NIL,
      buffers = vim.tbl_count(client.attached_buffers or {}),
      state = state,
      diagnostics = said,
    })
  end
  return result
end

return M
