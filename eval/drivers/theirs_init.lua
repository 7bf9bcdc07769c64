-- The eval's init for the Lua CodeCompanion: its openai_compatible adapter at the eval's proxy,
-- every tool the tasks use set to run without approval, no question left to block a turn.
local root = assert(os.getenv("EVAL_ANCHOR_ROOT"), "EVAL_ANCHOR_ROOT")
local url = assert(os.getenv("EVAL_URL"), "EVAL_URL")
vim.opt.runtimepath:prepend(root .. "/plenary.nvim")
vim.opt.runtimepath:prepend(root .. "/codecompanion.nvim")
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

_G.eval_state = { events = {}, prompts = {}, requests = 0 }

vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.eval_state.prompts, opts and opts.prompt or "")
  vim.schedule(function()
    on_choice(items[1], 1)
  end)
end
vim.ui.input = function(_, on_confirm)
  vim.schedule(function()
    on_confirm("")
  end)
end

local unasked = { require_approval_before = false }
require("codecompanion").setup({
  adapters = {
    http = {
      eval = function()
        return require("codecompanion.adapters").extend("openai_compatible", {
          name = "eval",
          env = {
            url = url,
            api_key = "none",
            chat_url = "/v1/chat/completions",
            models_endpoint = "/v1/models",
          },
          schema = { model = { default = "local" } },
        })
      end,
    },
  },
  interactions = {
    chat = {
      adapter = "eval",
      tools = {
        opts = {
          auto_submit_errors = true,
          auto_submit_success = true,
          default_tools = {},
          folds = { enabled = false },
        },
        ask_questions = { enabled = false },
        read_file = { opts = unasked },
        file_search = { opts = unasked },
        grep_search = { opts = unasked },
        get_changed_files = { opts = unasked },
        create_file = { opts = { require_approval_before = false, require_confirmation_after = false } },
        insert_edit_into_file = {
          opts = {
            require_approval_before = { buffer = false, file = false },
            require_confirmation_after = false,
          },
        },
        delete_file = {
          opts = { require_approval_before = false, require_cmd_approval = false, allowed_in_yolo_mode = true },
        },
        run_command = {
          opts = {
            require_approval_before = false,
            require_cmd_approval = false,
            allowed_in_yolo_mode = true,
            timeout = 120000,
          },
        },
      },
    },
  },
  display = { diff = { enabled = false } },
  opts = { log_level = "ERROR" },
})

local WATCHED = { "ChatDone", "RequestStarted", "RequestFinished", "ToolsStarted", "ToolsFinished", "ToolApprovalRequested" }
for _, name in ipairs(WATCHED) do
  vim.api.nvim_create_autocmd("User", {
    pattern = "CodeCompanion" .. name,
    callback = function()
      table.insert(_G.eval_state.events, name)
      if name == "RequestStarted" then
        _G.eval_state.requests = _G.eval_state.requests + 1
        if _G.eval_state.requests > (_G.eval_state.max_rounds or math.huge) then
          _G.eval_state.stopped = true
          _G.eval_state.stop() -- past the task's max_rounds: as our round cap says no
        end
      elseif name == "ToolsStarted" then
        _G.eval_state.tools = (_G.eval_state.tools or 0) + 1
      elseif name == "ToolsFinished" then
        _G.eval_state.tools = (_G.eval_state.tools or 0) - 1
      end
    end,
  })
end

--- Type the task under `## Me` and submit it, as the chat's send keymap does.
function _G.eval_state.send(text, max_rounds)
  _G.eval_state.max_rounds = max_rounds
  vim.cmd("CodeCompanionChat")
  local bufnr = vim.api.nvim_get_current_buf()
  _G.eval_state.bufnr = bufnr
  local chat = require("codecompanion.interactions.chat").buf_get_chat(bufnr)
  local n = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, n - 1, n, false)[1]
  local lines = vim.split(text, "\n", { plain = true })
  if last == "" then
    vim.api.nvim_buf_set_lines(bufnr, n - 1, n, false, lines)
  else
    vim.api.nvim_buf_set_lines(bufnr, n, n, false, lines)
  end
  chat:submit()
end

--- Stop the running request (past the task's max_rounds).
function _G.eval_state.stop()
  local chat = require("codecompanion.interactions.chat").buf_get_chat(_G.eval_state.bufnr)
  chat:stop()
end

--- Whether the chat is idle: no request out, no tool running.
function _G.eval_state.idle()
  local chat = require("codecompanion.interactions.chat").buf_get_chat(_G.eval_state.bufnr)
  return chat.current_request == nil and (_G.eval_state.tools or 0) <= 0
end

--- The chat's history, reduced to what the eval reads (role, text, calls, answered call).
function _G.eval_state.messages()
  local chat = require("codecompanion.interactions.chat").buf_get_chat(_G.eval_state.bufnr)
  local out = {}
  for _, m in ipairs(chat.messages) do
    local tools = m.tools or {}
    local calls = {}
    for _, c in ipairs(tools.calls or {}) do
      local fn = c["function"] or {}
      local args = fn.arguments
      if type(args) ~= "string" then
        args = vim.json.encode(args or vim.empty_dict())
      end
      table.insert(calls, { id = c.id, ["function"] = { name = fn.name, arguments = args } })
    end
    table.insert(out, {
      role = m.role,
      content = type(m.content) == "string" and m.content or "",
      tools = { calls = calls, call_id = tools.call_id },
    })
  end
  return out
end

_G.eval_state.ready = true
