// A Rust program for the integration fixture: unwinding through a panic
// still works after sframe-gen (Rust's .eh_frame is complete).
use std::panic;

#[inline(never)]
fn depth(n: u32) -> u32 {
    if n == 0 {
        panic!("bottom");
    }
    depth(n - 1) + 1
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let r = panic::catch_unwind(|| depth(10));
    std::process::exit(if r.is_err() { 0 } else { 1 });
}
