//! The child's half of `network = "proxy"`: a network namespace of its own, where nothing is
//! reachable but a listening socket on `127.0.0.1:`[`PROXY_PORT`] that rein's proxy serves.
//!
//! The namespace is what enforces it: the command has no route anywhere, loopback included
//! (its loopback is its own, empty), so a tool that ignores `HTTPS_PROXY` simply fails. The
//! listening socket is made in the child, inside the new namespace, and passed to rein over a
//! Unix socket pair (`SCM_RIGHTS`), with the child's pid: rein accepts on it from its own
//! namespace and connects out to the hosts it allows (`proxy.rs`).
//!
//! Between fork and exec: only system calls on memory prepared before the fork.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// The port the proxy listens on inside each command's namespace (every command has its own
/// loopback, so one number serves all).
pub(crate) const PROXY_PORT: u16 = 3128;

/// What the child needs: its end of the pair, and the user namespace's maps when rein is not
/// root and no mount namespace (which would have made the user namespace) comes first.
#[derive(Debug)]
pub(crate) struct ChildNet {
    /// The child's end of the socket pair (close-on-exec: the command never holds it).
    pub(crate) pair: OwnedFd,
    /// `Some`: unshare a user namespace with the network one, with these maps.
    pub(crate) user_maps: Option<(Vec<u8>, Vec<u8>)>,
}

/// Makes the pair: rein's end (non-blocking) and the child's.
#[expect(
    unsafe_code,
    reason = "socketpair into a stack array; both descriptors owned at once"
)]
pub(crate) fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors, which are owned right after.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) == -1
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

impl ChildNet {
    /// In the child, between fork and exec: the new namespace, loopback up, the listener,
    /// sent to rein.
    #[expect(
        unsafe_code,
        reason = "unshare, socket, ioctl, bind, listen and sendmsg after fork: no safe wrapper \
                  is async-signal-safe; every pointer is to stack memory or prepared buffers"
    )]
    pub(crate) fn enter(&self) -> io::Result<()> {
        let check = |result: libc::c_int| {
            if result == -1 {
                Err(io::Error::last_os_error())
            } else {
                Ok(result)
            }
        };
        // SAFETY: plain system calls on stack values and prepared buffers (see above).
        unsafe {
            match &self.user_maps {
                Some((uid_map, gid_map)) => {
                    super::protect::set_dumpable(true)?;
                    check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET))?;
                    super::protect::write_proc(c"/proc/self/setgroups", b"deny")?;
                    super::protect::write_proc(c"/proc/self/uid_map", uid_map)?;
                    super::protect::write_proc(c"/proc/self/gid_map", gid_map)?;
                    super::protect::set_dumpable(false)?;
                }
                None => {
                    check(libc::unshare(libc::CLONE_NEWNET))?;
                }
            }
            // Loopback starts down in a new namespace.
            let control = check(libc::socket(
                libc::AF_INET,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
            ))?;
            let mut request: libc::ifreq = std::mem::zeroed();
            for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
                *slot = *byte as libc::c_char;
            }
            request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            let up = libc::ioctl(control, libc::SIOCSIFFLAGS, &raw const request);
            libc::close(control);
            check(up)?;

            let listener = check(libc::socket(
                libc::AF_INET,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
            ))?;
            let address = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: PROXY_PORT.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
                },
                sin_zero: [0; 8],
            };
            let bound = libc::bind(
                listener,
                (&raw const address).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            if bound == -1 || libc::listen(listener, 128) == -1 {
                let error = io::Error::last_os_error();
                libc::close(listener);
                return Err(error);
            }
            let sent = send_fd(self.pair.as_raw_fd(), listener, libc::getpid());
            libc::close(listener);
            sent
        }
    }
}

/// Room for one descriptor's control message, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// Sends `fd` with `pid` as the data over `pair`.
#[expect(unsafe_code, reason = "sendmsg with stack buffers, after fork")]
fn send_fd(pair: libc::c_int, fd: libc::c_int, pid: libc::pid_t) -> io::Result<()> {
    let mut data = pid.to_ne_bytes();
    let mut control = Control([0; 64]);
    // SAFETY: the message points at stack buffers that outlive the call; the CMSG macros
    // stay inside `control`, which is larger than CMSG_SPACE(4).
    unsafe {
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        if header.is_null() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), fd);
        if libc::sendmsg(pair, &raw const message, libc::MSG_NOSIGNAL) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives what [`ChildNet::enter`] sent on rein's end of the pair: the listener and the
/// child's pid. `Ok(None)`: the child's end closed without sending (the command never
/// started).
#[expect(unsafe_code, reason = "recvmsg into stack buffers")]
pub(crate) fn receive(pair: &OwnedFd) -> io::Result<Option<(OwnedFd, libc::pid_t)>> {
    use std::os::fd::FromRawFd;
    let mut data = [0u8; size_of::<libc::pid_t>()];
    let mut control = Control([0; 64]);
    // SAFETY: as in `send_fd`; the received descriptor is owned from here on.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = control.0.len() as _;
        let received = libc::recvmsg(
            pair.as_raw_fd(),
            &raw mut message,
            libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT,
        );
        if received == -1 {
            return Err(io::Error::last_os_error());
        }
        if received == 0 {
            return Ok(None);
        }
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other("the sandbox sent no listening socket"));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>());
        Ok(Some((
            OwnedFd::from_raw_fd(fd),
            libc::pid_t::from_ne_bytes(data),
        )))
    }
}
