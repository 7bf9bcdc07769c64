-- :checkhealth codecompanion
local M = {}

local health = vim.health

-- Python's None arrives as vim.NIL.
---@generic T
---@param x T|vim.NIL
---@return T?
local function val(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

--- Neovim's version is recent enough. False when it is not.
---@return boolean
local function check_neovim()
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if v.major > 0 or v.minor >= 10 then
    health.ok("Neovim " .. version)
    return true
  end
  health.error("Neovim " .. version .. " is too old: 0.10 or newer is needed")
  return false
end

--- The command sandbox: which one works here and why not, and the default mode.
---@param sandbox? table the host's report: kind, reason, abi, enabled, mode, network, narrowed
function M.sandbox(sandbox)
  if not sandbox then
    return
  end
  local mode = ("default mode %s, network %s"):format(
    sandbox.mode,
    sandbox.network and "allowed" or "off"
  )
  local reason = val(sandbox.reason) or ""
  if not sandbox.enabled then
    local off = "command sandbox switched off (permissions.sandbox = false)"
    health.warn(("%s: commands run unconfined; %s"):format(off, mode))
  elseif sandbox.kind == "none" then
    health.warn(("no command sandbox: commands run unconfined (%s); %s"):format(reason, mode), {
      "Linux 5.13+ with Landlock enabled (lsm=landlock) gives one; see :help codecompanion-sandbox",
    })
  elseif reason ~= "" then
    health.warn(
      ("command sandbox: %s (ABI %d), but %s; %s"):format(sandbox.kind, sandbox.abi, reason, mode)
    )
  else
    health.ok(
      ("command sandbox: %s (Landlock ABI %d, seccomp, mount namespace); %s"):format(
        sandbox.kind,
        sandbox.abi,
        mode
      )
    )
  end
  local narrowed = val(sandbox.narrowed)
  if narrowed and sandbox.enabled and sandbox.kind ~= "none" then
    health.warn(
      ("this folder is not a project: %s; commands may read it but write only their temp"):format(
        narrowed
      ),
      { "open Neovim in a project folder to let commands write it" }
    )
  end
end

--- The host's Python, and the programs the tools use. False without the Python.
---@param host table the codecompanion.host module
---@return boolean
local function check_programs(host)
  local python = host.python()
  if vim.fn.executable(python) ~= 1 then
    health.error("no Python at " .. python, { "run `make install` in " .. host.root() })
    return false
  end
  health.ok("host Python: " .. python)
  for _, tool in ipairs({ "rg", "git" }) do
    if vim.fn.executable(tool) == 1 then
      health.ok(tool .. " found")
    else
      health.warn(
        tool .. " not found",
        tool == "rg" and { "grep_search falls back to a slower Python search" } or nil
      )
    end
  end
  return true
end

--- What the host reports of its Python packages, plugins and TLS certificates.
---@param host table the codecompanion.host module
---@param report table the host's health report
local function check_packages(host, report)
  health.ok(("host alive (python %s, pid %s)"):format(report.python, report.pid))
  for _, dep in ipairs(report.dependencies or {}) do
    if val(dep.version) then
      health.ok(("%s %s"):format(dep.name, dep.version))
    else
      health.error(dep.name .. " missing", { "run `make install` in " .. host.root() })
    end
  end
  for _, plugin in ipairs(report.plugins or {}) do
    health.ok("plugin " .. plugin)
  end
  for _, problem in ipairs(report.plugin_errors or {}) do
    health.warn(problem)
  end
  if val(report.tls) then
    health.ok("TLS certificates: " .. report.tls)
  end
end

--- The Python config file: read, broken, or absent (the defaults apply).
---@param report table the host's health report
local function check_config(report)
  local config_file = val(report.config_file) or require("codecompanion.config").config_file()
  if val(report.config_error) then
    health.error(
      "config file broken: " .. report.config_error,
      { "fix it, then :CodeCompanionReload" }
    )
  elseif not vim.uv.fs_stat(config_file) then
    health.info(
      ("no config file at %s: the defaults apply (see :help codecompanion-config)"):format(
        config_file
      )
    )
  else
    health.ok("config file: " .. config_file)
  end
end

--- The default adapter and whether its key resolves.
---@param report table the host's health report
local function check_adapter(report)
  if not val(report.adapter) then
    health.warn("no adapter configured: the chat uses the offline demo", {
      "set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, start Ollama,"
        .. " or set `adapter` in codecompanion.py",
    })
    return
  end
  local line = ("adapter: %s (model %s)"):format(report.adapter, val(report.model) or "default")
  if report.key_ok then
    health.ok(line .. ", key resolves")
  else
    health.warn(line .. ": " .. (val(report.key_problem) or "key does not resolve"))
  end
end

--- Each configured MCP server's state.
---@param report table the host's health report
local function check_mcp(report)
  local servers = report.mcp or {}
  if #servers == 0 then
    return
  end
  health.start("codecompanion: MCP servers")
  for _, server in ipairs(servers) do
    local line = ("%s (%s): %s"):format(server.name, server.transport, server.state)
    if server.state == "running" then
      health.ok(("%s, %d tools"):format(line, server.tools))
    elseif server.state == "failed" or server.state == "crashed" then
      health.warn(line .. (val(server.error) and (": " .. server.error) or ""))
    else
      health.info(line)
    end
  end
end

--- The skills, subagents and hooks (and what was skipped) a chat opened here would have.
---@param report table the host's health report
local function check_agent_files(report)
  local found = val(report.agent_files) or {}
  health.start("codecompanion: skills, subagents and hooks")
  local skills = found.skills or {}
  if #skills == 0 then
    health.info("skills: none found (.claude/skills/NAME/SKILL.md, ...: :h codecompanion-skills)")
  else
    health.ok(("skills: %s"):format(table.concat(skills, ", ")))
  end
  health.ok(("subagents: %s"):format(table.concat(found.agents or {}, ", ")))
  local hooks = found.hooks or {}
  if #hooks == 0 then
    health.info("hooks: none (:h codecompanion-hooks)")
  else
    health.ok(("hooks: %s"):format(table.concat(hooks, ", ")))
  end
  for _, problem in ipairs(found.problems or {}) do
    health.warn(problem)
  end
end

--- The language servers Neovim runs, and whether they gave diagnostics (what an edit's
--- result waits for).
local function check_servers()
  health.start("codecompanion: language servers (diagnostics after edits)")
  local servers = require("codecompanion.lsp_diagnostics").servers()
  if #servers == 0 then
    health.info("no language server is running: edits get no diagnostics (open a file first)")
    return
  end
  for _, s in ipairs(servers) do
    local line = ("%s (%s, %d buffer%s, root %s): diagnostics %s"):format(
      s.name,
      s.state,
      s.buffers,
      s.buffers == 1 and "" or "s",
      val(s.root) or "none",
      s.diagnostics
    )
    if s.diagnostics == "silent" then
      health.info(line .. " (not waited for after edits)")
    else
      health.ok(line)
    end
  end
end

--- The checks that run after the model's edits in this project.
---@param report table the host's health report
local function check_checks(report)
  health.start("codecompanion: checks after edits (" .. vim.fn.getcwd() .. ")")
  local checks = report.checks or {}
  if #checks == 0 then
    health.info("none configured or found (see :help codecompanion-checks)")
    return
  end
  for _, c in ipairs(checks) do
    local allowed = val(c.allowed)
    local state = allowed == nil and "not asked yet" or (allowed and "allowed" or "not allowed")
    local line = ("%s: %s (%s), %s"):format(c.glob, c.command, c.origin, state)
    if allowed == false then
      health.warn(line, { ":CodeCompanionChat Checks asks again" })
    else
      health.ok(line)
    end
  end
end

--- Run :checkhealth codecompanion: Neovim, the host's Python and packages, the config file,
--- the adapter's key and the MCP servers (the one place that waits on the host, bounded).
function M.check()
  local host = require("codecompanion.host")
  health.start("codecompanion")
  check_neovim()
  if not check_programs(host) then
    return
  end
  local report, err = host.request("health", { cwd = vim.fn.getcwd() })
  if not report or report.error then
    health.error(
      "host not answering: " .. tostring(err or report.error),
      { "log: " .. host.log_path() }
    )
    return
  end
  check_packages(host, report)
  check_config(report)
  check_adapter(report)
  M.sandbox(val(report.sandbox))
  check_mcp(report)
  check_agent_files(report)
  check_servers()
  check_checks(report)
  health.info("log: " .. host.log_path())
end

return M
