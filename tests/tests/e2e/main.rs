//! End-to-end tests of the controller over real gRPC: an in-process
//! controller with an embedded cluster of node servers on 127.0.0.1, driven
//! through the generated `ringleader.v1.Controller` client.

mod t01_catalogue;
mod t02_validation;
mod t03_live;
mod t04_live_vs_simulated;
mod t05_simulated;
mod t06_watch;
mod t07_records;
mod t08_configuration;
mod t09_compare;
mod t10_trees;
mod t11_live_64;
mod t12_mesh;
mod t13_complete_and_graphs;
mod t14_faults;
mod t15_kept;
mod t16_repaired_ring;
mod t17_zookeeper;
mod t18_chubby;
mod t19_mtls;
mod t20_history;
mod t21_limits;
mod t22_embedded_auth;
mod t23_stopping;
mod t24_history_full_disk;
mod t25_check;
mod t26_placement;
mod t27_fault_pushes;
mod t28_mutating_calls;
mod t29_raft_lease;
mod t30_fencing;
mod t31_scoped_faults;
mod t32_class_checks;
mod t33_programs;
mod t34_anonymous;
mod t35_sense_of_direction;
