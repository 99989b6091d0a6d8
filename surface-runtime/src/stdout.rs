//! stdout kept for a face's data (the MCP and wire stdio streams, the argv face's JSON).
//!
//! On unix the real stdout is duplicated for the face and file descriptor 1 is pointed at
//! stderr, so a stray `println!` (ours, the user's handler's or a dependency's) lands on stderr:
//! it can neither corrupt the data nor panic on a reader that closed the pipe early.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The real stdout, owned by the caller; fd 1 now writes to stderr.
pub(crate) fn keep() -> io::Result<OwnedFd> {
    // SAFETY: plain descriptor calls; the new descriptor is owned exactly once.
    unsafe {
        let out = OwnedFd::from_raw_fd(cvt(libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3))?);
        cvt(libc::dup2(2, 1))?;
        Ok(out)
    }
}

/// A duplicate of `fd` (close-on-exec), owned by the caller.
pub(crate) fn duplicate(fd: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: as above.
    unsafe {
        Ok(OwnedFd::from_raw_fd(cvt(libc::fcntl(
            fd,
            libc::F_DUPFD_CLOEXEC,
            3,
        ))?))
    }
}
