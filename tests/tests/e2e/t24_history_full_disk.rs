//! The election history on a disk that fills up and frees again:
//! a tmpfs of its own, mounted by the test (root only; CI runs
//! as root, elsewhere the test says so and skips).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, in_ci, simulated, test_config};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        // One directory per mount: the tests of this file run at once in one process.
        static MOUNTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = MOUNTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ringleader-tmpfs-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            let _ = std::fs::remove_dir(&dir);
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(Tmpfs(dir))
    }
}

impl Tmpfs {
    /// [`Tmpfs::mount`], or `None` (the test skips, saying so) where it cannot mount outside CI;
    /// CI runs as root and fails instead.
    fn mount_or_skip(size: &str) -> Option<Tmpfs> {
        match Tmpfs::mount(size) {
            Ok(t) => Some(t),
            Err(e) if in_ci() => panic!("CI must run the full-disk tests as root: {e}"),
            Err(e) => {
                eprintln!("note: skipping a full-disk test (needs root to mount a tmpfs): {e}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Fill the file system holding `dir` with one file until it refuses more.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    // Then byte by byte-ish, so not even a page is left.
    let small = [0u8; 512];
    while f.write_all(&small).is_ok() {}
    let _ = f.sync_all();
    path
}

async fn health(addr: std::net::SocketAddr) -> ServingStatus {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    let mut h = HealthClient::new(channel);
    let r = h.check(HealthCheckRequest { service: "ringleader.v1.Controller".into() }).await.unwrap();
    ServingStatus::try_from(r.into_inner().status).unwrap()
}

/// With `history_path` on a 2 MB tmpfs: 20 elections are answered and saved; the disk is filled
/// (the store may still commit a few inside its file); once a commit fails the controller refuses
/// new elections with UNAVAILABLE naming the history path and reports NOT_SERVING, and an
/// election that ends meanwhile is not answered until its record is on disk; the filler is
/// deleted and the controller serves again by itself, the waiting elections are answered; after
/// a restart on the same file every election ever answered is listed. Fails on the code before the fix: StartElection still answered FINISHED and health
/// stayed SERVING once the store had failed, and the records were lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_elections_until_space_returns_and_loses_none() {
    let Some(tmpfs) = Tmpfs::mount_or_skip("2m") else { return };
    let history = tmpfs.0.join("history.redb");
    let mut config = test_config(2);
    config.controller.history_path = history.display().to_string();
    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let mut answered = Vec::new();
    for _ in 0..20 {
        let e = client.start_election(simulated("as-far", 16)).await.unwrap().into_inner();
        assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
        answered.push(e.election_id);
    }

    tracing::info!("--- fill the disk");
    let filler = fill(&tmpfs.0);
    // The store may still have room inside its file: elections answered then are on disk (they
    // count as answered). Once a commit fails, an election that ends waits for the disk, and the
    // next one is refused.
    let mut waiting = Vec::new();
    let mut tries = 0;
    let refused = loop {
        let mut c = client.clone();
        let call = tokio::spawn(async move { c.start_election(simulated("as-far", 16)).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        if call.is_finished() {
            match call.await.unwrap() {
                Err(s) => break s,
                Ok(e) => answered.push(e.into_inner().election_id),
            }
        } else {
            waiting.push(call);
        }
        tries += 1;
        assert!(tries < 500, "never refused");
    };
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains(&history.display().to_string()), "{}", refused.message());
    assert_eq!(health(ctl.addr()).await, ServingStatus::NotServing);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(waiting.iter().all(|w| !w.is_finished()), "an election was answered while its record could not be saved");

    tracing::info!("--- free the disk");
    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    for w in waiting {
        let e = w.await.unwrap().unwrap().into_inner();
        assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
        answered.push(e.election_id);
    }
    let e = loop {
        match client.start_election(simulated("as-far", 16)).await {
            Ok(e) => break e.into_inner(),
            Err(s) if s.code() == Code::Unavailable && freed.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(s) => panic!("{s:?}"),
        }
    };
    eprintln!("serving again {} ms after the disk was freed", freed.elapsed().as_millis());
    answered.push(e.election_id);
    assert_eq!(health(ctl.addr()).await, ServingStatus::Serving);
    ctl.stop().await;

    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let listed = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    let listed: Vec<String> = listed.into_iter().map(|e| e.election_id).collect();
    let lost: Vec<&String> = answered.iter().filter(|id| !listed.contains(id)).collect();
    assert!(lost.is_empty(), "{} of {} answered elections lost: {lost:?}", lost.len(), answered.len());
    ctl.stop().await;
}

/// A record larger than the free space can never be written: on a 2 MB tmpfs, an election whose
/// diagram is of a megabyte is answered FINISHED without its diagram, saying why; the controller
/// keeps serving (health SERVING, the next elections answered), and a restart on the same file
/// serves and lists it. Fails on the code before the fix: the writer retried the same batch for
/// ever, the election was never answered and every later one was refused UNAVAILABLE, after a
/// restart too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_that_can_never_fit_is_saved_without_its_diagram() {
    let Some(tmpfs) = Tmpfs::mount_or_skip("2m") else { return };
    let mut config = test_config(2);
    config.controller.history_path = tmpfs.0.join("history.redb").display().to_string();
    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let big = pb::StartElectionRequest {
        diagram_options: Some(pb::DiagramOptions {
            axis: pb::DiagramAxis::Causal as i32,
            labels: true,
            heartbeats: false,
        }),
        ..simulated("as-far", 256)
    };
    let call = tokio::time::timeout(Duration::from_secs(30), client.start_election(big)).await;
    let e = call.expect("answered").unwrap().into_inner();
    assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
    assert!(e.diagram_svg.is_empty(), "the answer is what is on disk");
    assert!(e.notes.iter().any(|n| n.contains("disk refused")), "{:?}", e.notes);
    for _ in 0..5 {
        let e = client.start_election(simulated("as-far", 16)).await.unwrap().into_inner();
        assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
    }
    assert_eq!(health(ctl.addr()).await, ServingStatus::Serving);
    ctl.stop().await;

    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let listed = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    assert!(listed.iter().any(|l| l.election_id == e.election_id), "the big record survived the restart");
    let again = client.start_election(simulated("as-far", 16)).await.unwrap().into_inner();
    assert_eq!(again.state, pb::ElectionState::Finished as i32, "{again:?}");
    ctl.stop().await;
}

/// Default settings (`max_stored_mib` 64) with the history on a 20 MiB tmpfs: the stored records
/// are kept to a quarter of the volume, in memory and on disk alike; SIMULATED elections with
/// diagrams of up to a few megabytes are all answered within 30 s, the health stays SERVING; after
/// a restart on the same file a plain election still finishes. Before, the second large record
/// timed out and every later election was refused UNAVAILABLE, after a restart too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_volume_smaller_than_max_stored_mib_never_wedges() {
    let Some(tmpfs) = Tmpfs::mount_or_skip("20m") else { return };
    let mut config = test_config(2);
    config.controller.history_path = tmpfs.0.join("history.redb").display().to_string();
    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let big = |algorithm: &str, n: u32| pb::StartElectionRequest {
        diagram_options: Some(pb::DiagramOptions {
            axis: pb::DiagramAxis::Causal as i32,
            labels: true,
            heartbeats: false,
        }),
        ..simulated(algorithm, n)
    };
    for round in 0..3 {
        for (algorithm, n) in [("controlled-distance", 240), ("stages", 256), ("controlled-distance", 256)] {
            let call = tokio::time::timeout(Duration::from_secs(30), client.start_election(big(algorithm, n))).await;
            let e = call.unwrap_or_else(|_| panic!("round {round}: {algorithm} {n} not answered in 30 s")).unwrap();
            let e = e.into_inner();
            assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
            eprintln!("{algorithm} {n}: diagram of {} KiB, notes {:?}", e.diagram_svg.len() >> 10, e.notes);
            assert!(!e.notes.iter().any(|n| n.contains("disk refused")), "the history outgrew its volume: {e:?}");
        }
    }
    assert_eq!(health(ctl.addr()).await, ServingStatus::Serving);
    ctl.stop().await;

    tracing::info!("--- restart on the same volume");
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let plain = tokio::time::timeout(Duration::from_secs(30), client.start_election(simulated("as-far", 16))).await;
    let plain = plain.expect("answered within 30 s").unwrap().into_inner();
    assert_eq!(plain.state, pb::ElectionState::Finished as i32, "{plain:?}");
    let big = tokio::time::timeout(Duration::from_secs(30), client.start_election(big("as-far", 256))).await;
    assert_eq!(big.expect("answered").unwrap().into_inner().state, pb::ElectionState::Finished as i32);
    assert_eq!(health(ctl.addr()).await, ServingStatus::Serving);
    ctl.stop().await;
}
