-- The eval's init, plus a language server for Python buffers as a user's config starts one
-- (FileType + vim.lsp.start): python-lsp-server with pyflakes, from the venv running the eval.
dofile(assert(os.getenv("EVAL_BASE_INIT"), "EVAL_BASE_INIT"))
local pylsp = assert(os.getenv("EVAL_PYLSP"), "EVAL_PYLSP")
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    vim.lsp.start(
      { name = "pylsp", cmd = { pylsp }, root_dir = vim.fn.getcwd() },
      { bufnr = args.buf }
    )
  end,
})
