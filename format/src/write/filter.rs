//! Filter.db writer (placeholder replaced below).
