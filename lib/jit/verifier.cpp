#include "jit/verifier.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <sstream>

namespace benchfp::jit {

namespace {

std::atomic<bool> verify_on_build_flag{true};

// The callee-saved registers of the SysV ABI, and what each may hold: the entry
// value of callee-saved register k (k = 0..5), this kernel's frame, or anything else.
constexpr std::array<int, 6> callee_saved = {reg_rbx, reg_rbp, 12, 13, 14, 15};
constexpr int rbp_slot = 1;
constexpr int8_t frame_value = 6, other_value = 7;

int callee_slot(int gpr) {
    const auto it = std::find(callee_saved.begin(), callee_saved.end(), gpr);
    return it == callee_saved.end() ? -1 : static_cast<int>(it - callee_saved.begin());
}

// What the verifier knows at one instruction: rsp relative to entry, what each
// callee-saved register holds, and the values pushed (by their rsp offset).
struct State {
    int64_t rsp = 0;
    std::array<int8_t, 6> held = {0, 1, 2, 3, 4, 5};
    std::map<int64_t, int8_t> pushed;
    bool operator==(const State&) const = default;
};

const char* rbp_word(int8_t held) {
    return held == rbp_slot ? "caller" : held == frame_value ? "frame" : "clobbered";
}

class Walker {
public:
    Walker(const CodeRegionInfo& layout, FramePolicy policy) : layout_(layout), policy_(policy) {}

    Verification run() {
        work_.push_back({0, State{}});
        while (!work_.empty()) {
            auto [offset, state] = std::move(work_.back());
            work_.pop_back();
            if (!seen(offset, state)) walk_path(offset, std::move(state));
        }
        result_.instructions = decoded_.size();
        result_.begin = layout_.begin;
        for (auto& [offset, insn] : decoded_) result_.code.push_back(std::move(insn));
        for (int w = 0; w < 3; ++w) *window_text(w) = window_words_[w];
        return std::move(result_);
    }

private:
    enum Window { prologue, body, epilogue };

    // Follows one straight-line path from `offset` until it ends or joins a known one.
    void walk_path(size_t offset, State state) {
        ++result_.paths;
        while (true) {
            const Instruction* decoded = decode(offset);
            if (!decoded) return;
            const Instruction& insn = *decoded;
            check_rbp(insn, offset, state);
            const size_t next = offset + insn.size;
            apply(insn, offset, state);
            switch (insn.kind) {
            case Instruction::Kind::ret:
            case Instruction::Kind::trap: return;
            case Instruction::Kind::jump: follow(insn, offset, std::move(state)); return;
            case Instruction::Kind::branch: follow(insn, offset, state); break;
            case Instruction::Kind::indirect_jump: return fail(offset, insn, "indirect jump: its targets cannot be followed");
            default: break;
            }
            if (next >= layout_.size) return fail(offset, insn, "the path runs off the end of the code");
            offset = next;
            if (seen(offset, state)) return;
        }
    }

    // True when `offset` was reached before with a state that covers `state`, so
    // the walk stops here. Paths that join with different register contents are
    // merged (a register or pushed value that differs becomes "other") and
    // walked again with the merged state; finitely often, as values only go to
    // "other". Paths that join with rsp at different depths are a failure.
    bool seen(size_t offset, State& state) {
        const auto it = states_.find(offset);
        if (it == states_.end()) {
            states_.emplace(offset, state);
            return false;
        }
        State& known = it->second;
        if (known == state) return true;
        if (known.rsp != state.rsp || known.pushed.size() != state.pushed.size()) {
            std::ostringstream why;
            why << "paths join here with rsp at different depths (entry" << signed_text(known.rsp) << " and entry"
                << signed_text(state.rsp) << ")";
            fail(offset, *decode(offset), why.str());
            return true;
        }
        State merged = known;
        for (size_t k = 0; k < merged.held.size(); ++k)
            if (merged.held[k] != state.held[k]) merged.held[k] = other_value;
        for (auto& [slot, value] : merged.pushed) {
            const auto theirs = state.pushed.find(slot);
            if (theirs == state.pushed.end() || theirs->second != value) value = other_value;
        }
        if (merged == known) return true;  // the new path brings nothing the known state lacks
        known = merged;
        state = std::move(merged);
        return false;
    }

    // The instruction at `offset`, decoded once; null (a failure) when its bytes do not decode.
    const Instruction* decode(size_t offset) {
        auto it = decoded_.find(offset);
        if (it != decoded_.end()) return &it->second;
        auto insn = disassembler_.decode(layout_.begin + offset, layout_.size - offset);
        if (!insn) {
            if (result_.failure.empty()) {
                std::ostringstream bytes;
                const auto* code = reinterpret_cast<const uint8_t*>(layout_.begin + offset);
                for (size_t i = 0; i < std::min<size_t>(8, layout_.size - offset); ++i)
                    bytes << (i ? " " : "") << std::hex << (code[i] < 16 ? "0" : "") << int(code[i]);
                result_.failure = where(offset) + ": bytes that do not decode as an instruction (" + bytes.str() + " ...)";
                result_.failure_offset = offset;
            }
            return nullptr;
        }
        return &decoded_.emplace(offset, std::move(*insn)).first->second;
    }

    // Queues a jump's or branch's target with the state after it; a target outside the code is a failure.
    void follow(const Instruction& insn, size_t offset, State state) {
        if (insn.target < layout_.begin || insn.target >= layout_.begin + layout_.size) {
            std::ostringstream why;
            why << "jumps to 0x" << std::hex << insn.target << ", outside the code [0x" << layout_.begin << ", 0x"
                << layout_.begin + layout_.size << ")";
            return fail(offset, insn, why.str());
        }
        work_.push_back({insn.target - layout_.begin, std::move(state)});
    }

    Window window_of(size_t offset) const {
        return offset < layout_.prologue_end ? prologue : offset >= layout_.epilogue_begin ? epilogue : body;
    }

    // The policy's rule on rbp, checked with the state before the instruction runs.
    void check_rbp(const Instruction& insn, size_t offset, const State& state) {
        const Window window = window_of(offset);
        note_window(window, state.held[rbp_slot]);
        const bool writes_rbp = insn.writes(reg_rbp) || (insn.kind == Instruction::Kind::pop && insn.reg == reg_rbp) ||
                                insn.kind == Instruction::Kind::mov_rbp_rsp;
        switch (policy_) {
        case FramePolicy::preserve:
            if (writes_rbp) fail(offset, insn, "writes rbp in a preserve kernel (rbp must hold the caller's frame throughout)");
            return;
        case FramePolicy::clobber:
            if (window == body && state.held[rbp_slot] == rbp_slot)
                fail(offset, insn, "rbp still holds the caller's frame after the prologue window (setup_done() at " +
                                       hex(layout_.prologue_end) + "): under clobber it must be written before setup_done()");
            if (writes_rbp) result_.rbp_clobbered = true;
            return;
        case FramePolicy::frame: break;
        }
        if (writes_rbp) {
            const bool linking = window == prologue && (insn.kind == Instruction::Kind::mov_rbp_rsp ||
                                                        (insn.kind == Instruction::Kind::push && insn.reg == reg_rbp));
            const bool unlinking = insn.kind == Instruction::Kind::pop && insn.reg == reg_rbp;
            if (unlinking && window != epilogue)
                fail(offset, insn, "tears the frame down before the epilogue window (epilogue_begin " +
                                       hex(layout_.epilogue_begin) + ")");
            if (!linking && !unlinking)
                fail(offset, insn, std::string("writes rbp in the ") + (window == body ? "body" : "prologue/epilogue") +
                                       " of a frame kernel: a sample here loses its callers");
            if (unlinking) result_.frame_until = offset;
        }
        if (window == body && state.held[rbp_slot] != frame_value)
            fail(offset, insn, std::string("rbp holds ") + rbp_word(state.held[rbp_slot]) +
                                   ", not this kernel's frame, after the prologue window (setup_done() at " +
                                   hex(layout_.prologue_end) + ")");
    }

    // The instruction's effect on rsp and the callee-saved registers.
    void apply(const Instruction& insn, size_t offset, State& state) {
        using Kind = Instruction::Kind;
        switch (insn.kind) {
        case Kind::push:
            if (insn.reg == reg_rsp) fail(offset, insn, "pushes rsp");
            state.rsp -= 8;
            state.pushed[state.rsp] = callee_slot(insn.reg) >= 0 ? state.held[callee_slot(insn.reg)] : other_value;
            return;
        case Kind::pop: {
            if (insn.reg == reg_rsp) fail(offset, insn, "pops rsp");
            const auto it = state.pushed.find(state.rsp);
            const int8_t value = it == state.pushed.end() ? other_value : it->second;
            if (it != state.pushed.end()) state.pushed.erase(it);
            state.rsp += 8;
            if (callee_slot(insn.reg) >= 0) state.held[callee_slot(insn.reg)] = value;
            return;
        }
        case Kind::mov_rbp_rsp: {
            const auto it = state.pushed.find(state.rsp);
            const bool links = state.rsp == -8 && it != state.pushed.end() && it->second == rbp_slot;
            state.held[rbp_slot] = links ? frame_value : other_value;
            if (links && policy_ == FramePolicy::frame) result_.frame_from = offset + insn.size;
            return;
        }
        case Kind::adjust_rsp:
            state.rsp += insn.rsp_delta;
            state.pushed.erase(state.pushed.begin(), state.pushed.lower_bound(state.rsp));  // popped by the add
            return;
        case Kind::call:
            // The caller's call left rsp = 8 (mod 16) at entry; a call needs 0.
            if (((state.rsp % 16) + 16) % 16 != 8)
                fail(offset, insn, "calls with rsp not 16-byte aligned (rsp is entry" + signed_text(state.rsp) + ")");
            return;  // the callee returns with rsp and the callee-saved registers as they were
        case Kind::ret: check_return(insn, offset, state); return;
        default: break;
        }
        if (insn.writes(reg_rsp)) fail(offset, insn, "writes rsp other than by push, pop or add/sub of an immediate");
        for (size_t k = 0; k < callee_saved.size(); ++k)
            if (insn.writes(callee_saved[k])) state.held[k] = other_value;
    }

    void check_return(const Instruction& insn, size_t offset, const State& state) {
        if (state.rsp != 0)
            fail(offset, insn, "returns with rsp unbalanced (entry" + signed_text(state.rsp) + "): the epilogue does not undo the prologue");
        for (size_t k = 0; k < callee_saved.size(); ++k) {
            if (state.held[k] == static_cast<int8_t>(k)) continue;
            std::string holds = state.held[k] == other_value   ? "a value of the kernel"
                                : state.held[k] == frame_value ? "the kernel's frame"
                                                               : std::string("the caller's ") + gpr_name(callee_saved[state.held[k]]);
            fail(offset, insn, std::string("returns with callee-saved ") + gpr_name(callee_saved[k]) + " not restored (it holds " +
                                   holds + "): the epilogue must pop what the prologue pushed, in order");
        }
    }

    void note_window(Window window, int8_t rbp_held) {
        std::string& words = window_words_[window];
        const std::string word = rbp_word(rbp_held);
        if (("," + words + ",").find("," + word + ",") == std::string::npos) words += (words.empty() ? "" : ",") + word;
    }
    std::string* window_text(int w) {
        return w == prologue ? &result_.rbp_prologue : w == body ? &result_.rbp_body : &result_.rbp_epilogue;
    }

    static std::string hex(size_t offset) {
        std::ostringstream out;
        out << "+0x" << std::hex << offset;
        return out.str();
    }
    static std::string signed_text(int64_t v) { return (v < 0 ? "" : "+") + std::to_string(v); }
    std::string where(size_t offset) const { return "kernel " + layout_.name + " at " + hex(offset); }
    // Keeps the first failure; the walk goes on so the decoded code is complete.
    void fail(size_t offset, const Instruction& insn, const std::string& why) {
        if (!result_.failure.empty()) return;
        result_.failure = where(offset) + " `" + insn.text + "`: " + why;
        result_.failure_offset = offset;
    }

    const CodeRegionInfo& layout_;
    FramePolicy policy_;
    Disassembler disassembler_;
    std::map<size_t, Instruction> decoded_;
    std::map<size_t, State> states_;
    std::vector<std::pair<size_t, State>> work_;
    std::array<std::string, 3> window_words_;
    Verification result_;
};

}  // namespace

const Instruction* Verification::at(size_t offset) const {
    const auto it = std::lower_bound(code.begin(), code.end(), offset,
                                     [&](const Instruction& insn, size_t o) { return insn.address < begin + o; });
    return it != code.end() && it->address == begin + offset ? &*it : nullptr;
}

Verification verify(const CodeRegionInfo& layout, FramePolicy policy) { return Walker(layout, policy).run(); }

void set_verify_on_build(bool on) { verify_on_build_flag = on; }
bool verify_on_build() { return verify_on_build_flag; }

}  // namespace benchfp::jit
