//! Small-message zenoh benchmark peer, built from the same crates as the
//! library (`cargo build --release --example zbench`).
//!
//!   zbench pub <listen-endpoint> <key> <seconds> <size>   publish as fast as possible
//!   zbench sub <connect-endpoint> <key> <seconds>         count what arrives
//!
//! The subscriber is the pure-Rust baseline for transport/zenoh's Go
//! receive benchmark: its callback only counts, and it prints one JSON line
//! {"count":N,"secs":S,"rate":R} measured from its first sample.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zenoh::qos::CongestionControl;
use zenoh::{Config, Wait};

fn config(endpoint_key: &str, endpoint: &str) -> Config {
    let mut c = Config::default();
    c.insert_json5("mode", "\"peer\"").unwrap();
    c.insert_json5("scouting/multicast/enabled", "false").unwrap();
    c.insert_json5(endpoint_key, &format!("[\"{endpoint}\"]")).unwrap();
    if endpoint_key == "connect/endpoints" {
        c.insert_json5("listen/endpoints", "[\"tcp/127.0.0.1:0\"]").unwrap();
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: zbench pub <listen> <key> <seconds> <size> | zbench sub <connect> <key> <seconds>");
        std::process::exit(2);
    }
    let secs: f64 = args[4].parse().expect("seconds");
    match args[1].as_str() {
        "pub" => {
            let size: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(200);
            let s = zenoh::open(config("listen/endpoints", &args[2])).wait().unwrap();
            let p = s
                .declare_publisher(args[3].clone())
                .congestion_control(CongestionControl::Drop)
                .wait()
                .unwrap();
            eprintln!("ready");
            let payload = vec![0xabu8; size];
            let t0 = Instant::now();
            let mut n: u64 = 0;
            while t0.elapsed().as_secs_f64() < secs {
                for _ in 0..1000 {
                    p.put(payload.clone()).wait().unwrap();
                }
                n += 1000;
            }
            println!("{{\"sent\":{},\"secs\":{:.3},\"rate\":{:.0}}}", n, t0.elapsed().as_secs_f64(), n as f64 / t0.elapsed().as_secs_f64());
            let _ = s.close().wait();
        }
        "sub" => {
            let s = zenoh::open(config("connect/endpoints", &args[2])).wait().unwrap();
            let count = Arc::new(AtomicU64::new(0));
            let bytes = Arc::new(AtomicU64::new(0));
            let (c2, b2) = (count.clone(), bytes.clone());
            let _sub = s
                .declare_subscriber(args[3].clone())
                .callback(move |sample| {
                    b2.fetch_add(sample.payload().len() as u64, Ordering::Relaxed);
                    c2.fetch_add(1, Ordering::Relaxed);
                })
                .wait()
                .unwrap();
            eprintln!("ready");
            while count.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_micros(100));
            }
            let c0 = count.load(Ordering::Relaxed);
            let t0 = Instant::now();
            std::thread::sleep(Duration::from_secs_f64(secs));
            let c1 = count.load(Ordering::Relaxed);
            let dt = t0.elapsed().as_secs_f64();
            println!("{{\"count\":{},\"secs\":{:.3},\"rate\":{:.0}}}", c1 - c0, dt, (c1 - c0) as f64 / dt);
            let _ = s.close().wait();
        }
        m => {
            eprintln!("unknown mode {m}");
            std::process::exit(2);
        }
    }
}
