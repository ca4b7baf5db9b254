// Cooperative fibers for the host emulation of a CUDA block (cuda_on_host.h), tests only.
//
// Every thread of an emulated block runs as a fiber on the calling OS thread; a barrier, or a
// wait on a TMA barrier, switches to the next fiber instead of sleeping in the kernel.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

// x86-64 (every machine this project builds on) switches with the few instructions below;
// other POSIX machines, or TT_HOST_UCONTEXT (to test that path), use ucontext.
#if defined(__x86_64__) && !defined(TT_HOST_UCONTEXT)
#define TT_HOST_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

// AddressSanitizer (make sanitize) tracks one stack per thread; it must be told of each switch.
#if defined(__SANITIZE_ADDRESS__)
#define TT_HOST_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_HOST_FIBER_ASAN 1
#endif
#endif
#if defined(TT_HOST_FIBER_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(TT_HOST_FIBER_ASM)
// torch_transpose_fiber_switch(&save_sp, load_sp): pushes the callee-saved registers of the
// System V ABI on the current stack, stores the stack pointer in *save_sp, loads load_sp and
// pops the other context's registers; its `ret` resumes that context where it last switched
// (or, for a new fiber, enters fiber_entry: see FiberBlock::prepare). Weak, because every file that
// includes this header emits it. The test binary is built without CET shadow stacks
// (CMakeLists.txt), which a switch of stacks would trip.
asm(R"(
  .pushsection .text
  .weak torch_transpose_fiber_switch
  .type torch_transpose_fiber_switch, @function
torch_transpose_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size torch_transpose_fiber_switch, . - torch_transpose_fiber_switch
  .popsection
)");
extern "C" void torch_transpose_fiber_switch(void** save_sp, void* load_sp);
#endif

namespace torch_transpose {
namespace host_emulation {

// Where a switch left a context (a fiber or the scheduler): its stack pointer (or ucontext's
// record), and under ASan the fake stack that the sanitizer hands back when it resumes.
struct SavedContext {
#if defined(TT_HOST_FIBER_ASM)
  void* sp = nullptr;
#else
  ucontext_t context;
#endif
#if defined(TT_HOST_FIBER_ASAN)
  void* fake_stack = nullptr;
#endif
};

// Saves the running context in `save` and resumes `load`.
inline void switch_context(SavedContext& save, SavedContext& load) {
#if defined(TT_HOST_FIBER_ASM)
  torch_transpose_fiber_switch(&save.sp, load.sp);
#else
  swapcontext(&save.context, &load.context);
#endif
}

// One fiber: its stack (a guard page below it, so an overflow faults rather than corrupts the
// next stack) and its saved context.
struct Fiber {
  static constexpr size_t kStackBytes = size_t{256} << 10;
  static constexpr size_t kGuardBytes = size_t{4} << 10;

  Fiber() {
    void* p = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p, kGuardBytes, PROT_NONE) != 0) {
      std::fprintf(stderr, "host fibers: no memory for a fiber stack\n");
      std::abort();
    }
    mapping = static_cast<unsigned char*>(p);
  }
  ~Fiber() { munmap(mapping, kStackBytes + kGuardBytes); }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  unsigned char* stack_bottom() const { return mapping + kGuardBytes; }

  unsigned char* mapping = nullptr;
  bool done = false;
  int index = 0;
  SavedContext saved;
};

// Runs body(context, t) for t in [0, count) as fibers on the calling thread, round robin, until
// every one returns. A fiber gives way with yield(); one that waits for a condition yields in a
// loop until another fiber makes it true. One block at a time per OS thread.
class FiberBlock {
 public:
  using Body = void (*)(void* context, int fiber);

  void run(int count, Body body, void* context) {
    while (static_cast<int>(fibers_.size()) < count) fibers_.push_back(std::make_unique<Fiber>());  // kept for later launches
    body_ = body;
    context_ = context;
    FiberBlock* const outer = active_;
    active_ = this;
    for (int t = 0; t < count; ++t) prepare(*fibers_[t], t);
    int live = count;
    while (live > 0) {
      for (int t = 0; t < count; ++t) {
        Fiber& f = *fibers_[t];
        if (f.done) continue;
        current_ = &f;
        switch_to_fiber(f);
        if (f.done) --live;
      }
    }
    current_ = nullptr;
    active_ = outer;
  }

  // From inside a fiber: back to the scheduler, which resumes the next fiber.
  static void yield() {
    FiberBlock* block = active_;
    if (block == nullptr || block->current_ == nullptr) {
      std::fprintf(stderr, "host fibers: yield outside a fiber\n");
      std::abort();
    }
    block->switch_to_scheduler(*block->current_, /*dying=*/false);
  }

 private:
  void prepare(Fiber& f, int index) {
    f.done = false;
    f.index = index;
#if defined(TT_HOST_FIBER_ASM)
    // The stack the first switch pops: six registers (zero), then fiber_entry as the return
    // address, then a zero "return address" for fiber_entry itself, so that it starts with the
    // stack alignment of a called function (rsp = 8 mod 16).
    auto* top = reinterpret_cast<void**>(f.stack_bottom() + Fiber::kStackBytes);  // 16-byte aligned
    top[-1] = nullptr;
    top[-2] = reinterpret_cast<void*>(&fiber_entry);
    for (int r = 3; r <= 8; ++r) top[-r] = nullptr;
    f.saved.sp = top - 8;
#else
    ucontext_t& context = f.saved.context;
    getcontext(&context);
    context.uc_stack.ss_sp = f.stack_bottom();
    context.uc_stack.ss_size = Fiber::kStackBytes;
    context.uc_link = nullptr;
    makecontext(&context, &fiber_entry, 0);
#endif
  }

  static void fiber_entry() {
    FiberBlock* block = active_;
#if defined(TT_HOST_FIBER_ASAN)
    __sanitizer_finish_switch_fiber(nullptr, &block->scheduler_stack_bottom_, &block->scheduler_stack_bytes_);
#endif
    Fiber& f = *block->current_;
    block->body_(block->context_, f.index);
    f.done = true;
    block->switch_to_scheduler(f, /*dying=*/true);
    std::abort();  // a finished fiber is never resumed
  }

  void switch_to_fiber(Fiber& f) {
#if defined(TT_HOST_FIBER_ASAN)
    __sanitizer_start_switch_fiber(&scheduler_.fake_stack, f.stack_bottom(), Fiber::kStackBytes);
#endif
    switch_context(scheduler_, f.saved);
#if defined(TT_HOST_FIBER_ASAN)
    __sanitizer_finish_switch_fiber(scheduler_.fake_stack, nullptr, nullptr);
#endif
  }

  void switch_to_scheduler(Fiber& f, bool dying) {
#if defined(TT_HOST_FIBER_ASAN)
    __sanitizer_start_switch_fiber(dying ? nullptr : &f.saved.fake_stack, scheduler_stack_bottom_, scheduler_stack_bytes_);
#else
    (void)dying;
#endif
    switch_context(f.saved, scheduler_);
#if defined(TT_HOST_FIBER_ASAN)
    __sanitizer_finish_switch_fiber(f.saved.fake_stack, &scheduler_stack_bottom_, &scheduler_stack_bytes_);
#endif
  }

  static inline thread_local FiberBlock* active_ = nullptr;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  Fiber* current_ = nullptr;
  Body body_ = nullptr;
  void* context_ = nullptr;
  SavedContext scheduler_;
#if defined(TT_HOST_FIBER_ASAN)
  const void* scheduler_stack_bottom_ = nullptr;
  size_t scheduler_stack_bytes_ = 0;
#endif
};

}  // namespace host_emulation
}  // namespace torch_transpose
