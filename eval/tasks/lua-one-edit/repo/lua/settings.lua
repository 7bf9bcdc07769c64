local opt = vim.opt

opt.number = true
opt.expandtab = true
opt.shiftwidth = 2
opt.tabstop = 8
opt.wrap = false
