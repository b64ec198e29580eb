//! `ss -ti` snapshots (to be written).
