pub mod rto;
