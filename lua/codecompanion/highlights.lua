-- Every highlight group the plugin uses, defined with `default = true` (a colorscheme or the
-- user wins) and linked to standard groups. Re-applied when the colorscheme changes.
local M = {}

M.LINKS = {
  CodeCompanionHeader = "Title", -- `## Me` / `## LLM (…)` headers
  CodeCompanionTokens = "Comment", -- the token count after the LLM header
  CodeCompanionSpinner = "Comment",
  CodeCompanionToolPending = "Comment",
  CodeCompanionToolAwaitingApproval = "DiagnosticInfo",
  CodeCompanionToolRunning = "DiagnosticHint",
  CodeCompanionToolSuccess = "DiagnosticOk",
  CodeCompanionToolError = "DiagnosticError",
  CodeCompanionToolRejected = "DiagnosticWarn",
  CodeCompanionToolCancelled = "DiagnosticWarn",
  CodeCompanionToolTimeout = "DiagnosticError",
  CodeCompanionToolDetail = "Comment", -- the text after a tool's status icon
  CodeCompanionFold = "Folded", -- folded tool output and context
  CodeCompanionContext = "Special", -- context lines (`#{buffer}`, `/file`, `/buffer`)
  CodeCompanionDiffAdd = "DiffAdd", -- diff review
  CodeCompanionDiffDelete = "DiffDelete",
  CodeCompanionDiffHunk = "DiffChange",
  CodeCompanionPreview = "NormalFloat", -- the preview above a question
  CodeCompanionPreviewBorder = "FloatBorder",
  CodeCompanionWinbar = "WinBar", -- the hint above an argument edit
}

--- Link the highlight groups to their defaults (a colorscheme's own links win).
function M.setup()
  for group, target in pairs(M.LINKS) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

return M
