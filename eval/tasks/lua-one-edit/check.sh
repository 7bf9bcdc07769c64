# Solved when shiftwidth is 4 and the other settings stayed.
grep -Eq "^opt\.shiftwidth *= *4$" lua/settings.lua && grep -q "^opt.tabstop = 8$" lua/settings.lua \
  && grep -q "^opt.number = true$" lua/settings.lua && ! grep -q "shiftwidth = 2" lua/settings.lua
