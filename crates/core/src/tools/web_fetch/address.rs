//! Which addresses a fetched page may lead rein to, and the resolver that enforces it.
//!
//! A page must not pivot rein to the person's own services (a router's admin page, a local
//! database's HTTP port, a cloud metadata endpoint): addresses that are not public are
//! refused unless a rule names the host. The check runs in the resolver the HTTP client
//! connects through, on the very addresses it then connects to, so a name that resolves to a
//! public address when checked and a private one when used (DNS rebinding) gains nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether a rule names a host, letting web_fetch reach it at a private address.
pub(crate) type HostNamed = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Why `ip` is not a public address, or `None` when it is.
pub(crate) fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => private_v4(v4),
            None => private_v6(v6),
        },
    }
}

fn private_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("a private network address")
    } else if ip.is_link_local() {
        Some("a link-local address (cloud metadata services live there)")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else {
        None
    }
}

fn private_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private network address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if let Some(v4) = ip.to_ipv4() {
        // IPv4-compatible forms (::a.b.c.d) reach the same host.
        private_v4(v4)
    } else {
        None
    }
}

/// The refusal the model reads for `host` at `ip`.
pub(crate) fn refusal(host: &str, ip: IpAddr, kind: &str) -> String {
    format!(
        "{host} is at {ip}, {kind}: web_fetch does not reach the person's own network unless \
         a rule names the host (an allow rule `web_fetch(domain:{host})` in the config or \
         `--allow`)"
    )
}

/// Resolves names with the system resolver and keeps only the addresses web_fetch may reach.
pub(crate) struct CheckedResolver {
    pub(crate) named: HostNamed,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let named = Arc::clone(&self.named);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if named(&host) {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            // Refused when any address is private: a name that mixes them is not trusted with
            // the public ones either.
            if let Some((ip, kind)) = found
                .iter()
                .find_map(|addr| private_kind(addr.ip()).map(|kind| (addr.ip(), kind)))
            {
                return Err(Box::new(Refused(refusal(&host, ip, kind))) as _);
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

/// A refused address, found inside the HTTP client's error chain to tell the model why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub(crate) String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_network_is_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(private_kind(ip).is_some(), "{ip} passed as public");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(private_kind(ip), None, "{ip}");
        }
    }
}
