-- Tool status icons and the spinner: Nerd Font glyphs (`icons = true`, or vim.g.have_nerd_font),
-- symbols every font has (the default), or plain words (`icons = false`).
local M = {}

local ICON_SETS = {
  nerd = {
    pending = "\u{f051f} ",
    awaiting_approval = "\u{f059} ",
    running = "\u{f013} ",
    success = "\u{f00c} ",
    error = "\u{f00d} ",
    rejected = "\u{f05e} ",
    cancelled = "\u{f28d} ",
    timeout = "\u{f1ad1} ",
  },
  symbols = {
    pending = "… ",
    awaiting_approval = "? ",
    running = "⚙ ",
    success = "✓ ",
    error = "✗ ",
    rejected = "✗ ",
    cancelled = "⊘ ",
    timeout = "⌛ ",
  },
  plain = {
    pending = "[pending] ",
    awaiting_approval = "[approve?] ",
    running = "[running] ",
    success = "[ok] ",
    error = "[error] ",
    rejected = "[rejected] ",
    cancelled = "[cancelled] ",
    timeout = "[timeout] ",
  },
}
M.HL = {
  pending = "CodeCompanionToolPending",
  awaiting_approval = "CodeCompanionToolAwaitingApproval",
  running = "CodeCompanionToolRunning",
  success = "CodeCompanionToolSuccess",
  error = "CodeCompanionToolError",
  rejected = "CodeCompanionToolRejected",
  cancelled = "CodeCompanionToolCancelled",
  timeout = "CodeCompanionToolTimeout",
}
local SPINNERS = {
  symbols = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" },
  plain = { "|", "/", "-", "\\" },
}

--- The icon set in use: `setup({ icons = ... })`, else Nerd Font glyphs only if the user has them.
---@return "nerd"|"symbols"|"plain"
function M.icon_set()
  local choice = require("codecompanion.config").options.icons
  if choice == false then
    return "plain"
  elseif choice == true or (choice == nil and vim.g.have_nerd_font) then
    return "nerd"
  end
  return "symbols"
end

--- The icons of the set in use, by status.
---@return table<string, string> status -> icon
function M.set()
  return ICON_SETS[M.icon_set()]
end

--- The spinner's frames.
---@return string[]
function M.spinner()
  return M.icon_set() == "plain" and SPINNERS.plain or SPINNERS.symbols
end

return M
