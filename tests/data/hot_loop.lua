-- A hot loop for LuaJIT to trace-compile: the third-party JIT the audit tests look at
-- (tests/cli_test.cpp, CliAudit.SeesLuaJitTraces). Runs about 3 s.
local function f(n) local s = 0 for i = 1, n do s = s + (i % 7) * 3 end return s end
local t = os.clock()
local total = 0
while os.clock() - t < 3 do total = total + f(1000000) end
print(total)
