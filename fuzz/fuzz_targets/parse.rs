//! Any bytes, cut anywhere: the parser never panics, and every chunking gives the items the whole stream
//! gives. The first byte of the input chooses the chunk size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use managed_eventsource::parse::{Item, Parser};

fn items(chunks: &mut dyn Iterator<Item = &[u8]>) -> Vec<String> {
    let mut p = Parser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, &mut |item: Item| out.push(format!("{item:?}")));
    }
    p.finish();
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, stream)) = data.split_first() else { return };
    let whole = items(&mut std::iter::once(stream));
    let cut = items(&mut stream.chunks(usize::from(size % 17) + 1));
    assert_eq!(whole, cut);
});
