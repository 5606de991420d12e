//! Whom rein trusts over TLS: the bundled Mozilla roots, an extra CA file, and the system's
//! certificate store, the last loaded only when a server is not trusted by the first two.
//!
//! reqwest's own rustls setup uses `rustls-platform-verifier`, which on Linux reads and parses
//! the whole system store (about 140 certificates) while the client is built, and which knows
//! nothing of the bundled roots. Here the client is built with a verifier that tries the cheap
//! in-memory roots first and asks the platform verifier, built once and on first need, only
//! when they reject a certificate. Start-up pays for neither.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::ConfigError;

/// Installs ring as the process's rustls provider; reqwest needs one with `rustls-no-provider`.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A rustls client configuration trusting the bundled roots, `ca_file` and the system store.
pub fn client_config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut extra = Vec::new();
    if let Some(path) = ca_file {
        extra = read_ca_file(path)?;
        for cert in &extra {
            roots.add(cert.clone()).map_err(|e| ConfigError::CaFile {
                path: path.to_owned(),
                message: format!("a certificate in it is not usable as a root: {e}"),
            })?;
        }
    }
    let bundled = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| ConfigError::Client(format!("could not set up TLS verification: {e}")))?;
    let verifier = TrustVerifier {
        bundled,
        extra,
        provider: provider.clone(),
        system: OnceLock::new(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Client(format!("could not set up TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let err = |message: String| ConfigError::CaFile {
        path: path.to_owned(),
        message,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| err(format!("cannot read it: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(format!("it is not a valid PEM file: {e}")))?;
    if certs.is_empty() {
        return Err(err("it holds no PEM certificate".into()));
    }
    Ok(certs)
}

/// Accepts a certificate that the bundled roots (plus the extra CAs) or the system store trust.
#[derive(Debug)]
struct TrustVerifier {
    bundled: Arc<WebPkiServerVerifier>,
    extra: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    /// The platform verifier, built on first need; `None` when the system has no usable store.
    system: OnceLock<Option<rustls_platform_verifier::Verifier>>,
}

impl TrustVerifier {
    fn system(&self) -> Option<&rustls_platform_verifier::Verifier> {
        self.system
            .get_or_init(|| {
                let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra.iter().cloned(),
                    self.provider.clone(),
                );
                match verifier {
                    Ok(v) => Some(v),
                    Err(e) => {
                        tracing::warn!("the system certificate store is unusable: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }
}

impl ServerCertVerifier for TrustVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let bundled = self.bundled.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match bundled {
            Ok(verified) => Ok(verified),
            Err(bundled_error) => match self.system() {
                Some(system) => system.verify_server_cert(
                    end_entity,
                    intermediates,
                    server_name,
                    ocsp_response,
                    now,
                ),
                None => Err(bundled_error),
            },
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
