-- Registers the completion sources with nvim-cmp and blink.cmp, once per Neovim (not per buffer).
local M = {}

local done = { cmp = false, blink = false }

--- True when nvim-cmp or blink.cmp has the source (they open the menu themselves).
---@return boolean
function M.plugin()
  return done.cmp or done.blink
end

--- Register the sources with nvim-cmp and blink.cmp, where they are installed (once).
function M.register()
  if not done.cmp then
    local ok, cmp = pcall(require, "cmp")
    if ok and type(cmp.register_source) == "function" then
      done.cmp = true
      pcall(cmp.register_source, "codecompanion", require("codecompanion.completion.cmp").new())
      if cmp.setup and type(cmp.setup.filetype) == "function" then
        pcall(cmp.setup.filetype, "codecompanion", {
          sources = cmp.config.sources({ { name = "codecompanion" } }, { { name = "buffer" } }),
        })
      end
    end
  end
  if not done.blink then
    local ok, blink = pcall(require, "blink.cmp")
    if ok and type(blink.add_source_provider) == "function" then
      done.blink = true
      pcall(blink.add_source_provider, "codecompanion", {
        name = "codecompanion",
        module = "codecompanion.completion.blink",
      })
      if type(blink.add_filetype_source) == "function" then
        pcall(blink.add_filetype_source, "codecompanion", "codecompanion")
      end
    end
  end
end

return M
