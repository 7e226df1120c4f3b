//! TLS for the client port, the replication link and the cluster bus, with Redis's directives:
//! `tls-port` (a second listening port that speaks TLS only), `tls-cert-file` and
//! `tls-key-file` (this server's certificate chain and key, PEM), `tls-ca-cert-file`
//! (the authorities whose certificates are trusted, PEM), `tls-auth-clients`
//! (`yes`: a client must present a certificate from one of them, the default as in
//! Redis; `optional`: checked when presented; `no`), and `tls-replication yes` (a
//! replica connects to its primary's TLS port, presenting its own certificate and
//! checking the primary's against the authorities and the host it was given), and
//! `tls-cluster yes` (the cluster bus speaks TLS only, on the TLS port plus 10000 by
//! default, as in Redis: each node presents its certificate both ways and takes only
//! one from the authorities, whatever `tls-auth-clients` says; names are not
//! checked on the bus, as Redis does not, since nodes learn each other's addresses
//! from the cluster itself).
//!
//! Built on rustls (TLS 1.2 and 1.3, its default cipher suites), without OpenSSL.
//! A connection's TLS state sits in [`Sock`], which the event loops read and write as
//! they do a plain socket.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The TLS directives: read from the configuration file, shown by CONFIG GET, refused
/// by CONFIG SET (set at start).
pub const DIRECTIVES: &[&str] = &[
    "tls-port",
    "tls-cert-file",
    "tls-key-file",
    "tls-ca-cert-file",
    "tls-auth-clients",
    "tls-replication",
    "tls-cluster",
];

/// Whether TLS clients must present a certificate (`tls-auth-clients`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthClients {
    /// Required, from a trusted authority (Redis's default).
    #[default]
    Yes,
    /// Checked when presented.
    Optional,
    /// Not asked for.
    No,
}

impl AuthClients {
    /// The directive's value.
    pub fn name(self) -> &'static str {
        match self {
            AuthClients::Yes => "yes",
            AuthClients::Optional => "optional",
            AuthClients::No => "no",
        }
    }

    /// From the directive's value.
    pub fn parse(s: &str) -> Option<AuthClients> {
        match s.to_ascii_lowercase().as_str() {
            "yes" => Some(AuthClients::Yes),
            "optional" => Some(AuthClients::Optional),
            "no" => Some(AuthClients::No),
            _ => None,
        }
    }
}

/// The TLS directives as the configuration gave them (checked by [`Tls::load`]).
#[derive(Clone, Debug, Default)]
pub struct TlsSettings {
    /// `tls-port` (0: no TLS port).
    pub port: u16,
    /// `tls-cert-file`.
    pub cert_file: Option<PathBuf>,
    /// `tls-key-file`.
    pub key_file: Option<PathBuf>,
    /// `tls-ca-cert-file`.
    pub ca_cert_file: Option<PathBuf>,
    /// `tls-auth-clients`.
    pub auth_clients: AuthClients,
    /// `tls-replication`.
    pub replication: bool,
    /// `tls-cluster`.
    pub cluster: bool,
}

impl TlsSettings {
    /// True when a TLS port or TLS replication is asked for.
    pub fn wanted(&self) -> bool {
        self.port != 0 || self.replication || self.cluster
    }
}

/// The loaded certificates and keys: what TLS connections are made with.
#[derive(Debug, Clone)]
pub struct Tls {
    /// For connections accepted on the TLS port.
    pub server: Arc<rustls::ServerConfig>,
    /// For the replication link, when `tls-replication yes`.
    pub client: Option<Arc<rustls::ClientConfig>>,
    /// For the cluster bus, when `tls-cluster yes`: accepting (a certificate from the
    /// authorities required) and connecting (the peer's chain checked, not its name).
    pub bus: Option<(Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>)>,
}

/// Largest PEM file read (bytes): a bound before reading.
const MAX_PEM: u64 = 1 << 20;

fn read_pem(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    f.take(MAX_PEM + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_PEM {
        return Err(format!("{what} {}: longer than 1 MiB", path.display()));
    }
    Ok(bytes)
}

fn certs(what: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_pem(what, path)?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{what} {}: no certificate in it", path.display()));
    }
    Ok(certs)
}

impl Tls {
    /// Reads the files and builds the TLS settings; None when no TLS is asked for.
    /// Each problem is one message naming the directive and the file.
    pub fn load(s: &TlsSettings) -> Result<Option<Tls>, String> {
        if !s.wanted() {
            return Ok(None);
        }
        if s.cluster && s.port == 0 {
            return Err("tls-cluster yes needs tls-port (the bus port is derived from it)".into());
        }
        let need = |p: &Option<PathBuf>, name: &str| {
            p.clone().ok_or_else(|| {
                format!("{name} is needed with tls-port, tls-replication or tls-cluster")
            })
        };
        let chain = certs("tls-cert-file", &need(&s.cert_file, "tls-cert-file")?)?;
        let key_path = need(&s.key_file, "tls-key-file")?;
        let key_pem = read_pem("tls-key-file", &key_path)?;
        let key = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| format!("tls-key-file {}: {e}", key_path.display()))?;
        let mut roots = rustls::RootCertStore::empty();
        let ca_needed = s.replication || s.cluster || s.auth_clients != AuthClients::No;
        if let Some(ca) = &s.ca_cert_file {
            for c in certs("tls-ca-cert-file", ca)? {
                roots
                    .add(c)
                    .map_err(|e| format!("tls-ca-cert-file {}: {e}", ca.display()))?;
            }
        } else if ca_needed {
            return Err(
                "tls-ca-cert-file is needed (to check clients' certificates, the \
                        primary's with tls-replication, or other nodes' with tls-cluster)"
                    .into(),
            );
        }
        let roots = Arc::new(roots);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server_with = |auth: AuthClients| -> Result<Arc<rustls::ServerConfig>, String> {
            let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?;
            let builder = match auth {
                AuthClients::No => builder.with_no_client_auth(),
                auth => {
                    let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                        roots.clone(),
                        provider.clone(),
                    );
                    let v = if auth == AuthClients::Optional {
                        v.allow_unauthenticated()
                    } else {
                        v
                    };
                    builder.with_client_cert_verifier(v.build().map_err(|e| e.to_string())?)
                }
            };
            let c = builder
                .with_single_cert(chain.clone(), key.clone_key())
                .map_err(|e| format!("tls-cert-file and tls-key-file: {e}"))?;
            Ok(Arc::new(c))
        };
        let client_with = |names: bool| -> Result<Arc<rustls::ClientConfig>, String> {
            let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?;
            let builder = if names {
                builder.with_root_certificates(roots.clone())
            } else {
                let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    roots.clone(),
                    provider.clone(),
                )
                .build()
                .map_err(|e| e.to_string())?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(ChainOnly(v)))
            };
            let c = builder
                .with_client_auth_cert(chain.clone(), key.clone_key())
                .map_err(|e| format!("tls-cert-file and tls-key-file: {e}"))?;
            Ok(Arc::new(c))
        };
        let server = server_with(s.auth_clients)?;
        let client = if s.replication {
            Some(client_with(true)?)
        } else {
            None
        };
        let bus = if s.cluster {
            Some((server_with(AuthClients::Yes)?, client_with(false)?))
        } else {
            None
        };
        Ok(Some(Tls {
            server,
            client,
            bus,
        }))
    }
}

/// Checks a server's certificate chain against the authorities but not the name it
/// is for: the cluster bus's trust (a certificate from the cluster's authorities),
/// as in Redis, whose nodes learn each other's addresses from the cluster.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        // The chain is checked first; a name mismatch is the only failure let through.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A connection this server makes (to its primary, to another node's bus): plain, or
/// TLS over a blocking socket.
#[derive(Debug)]
pub enum Stream {
    /// Plain TCP.
    Plain(std::net::TcpStream),
    /// TLS.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>>),
}

impl Stream {
    /// `sock` as is (`config` None) or with TLS made by `config` to `host` (an address
    /// or a name; whether the certificate must name it is the config's choice).
    pub fn over(
        sock: std::net::TcpStream,
        config: Option<Arc<rustls::ClientConfig>>,
        host: &str,
    ) -> io::Result<Stream> {
        let Some(config) = config else {
            return Ok(Stream::Plain(sock));
        };
        let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TLS: the host {host}: {e}"),
            )
        })?;
        let conn = rustls::ClientConnection::new(config, name).map_err(io::Error::other)?;
        Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(conn, sock))))
    }

    /// The TCP socket under it.
    pub fn tcp(&self) -> &std::net::TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// A client's socket: plain, or TLS over it. Reads and writes are the plaintext; the
/// TLS records go through the socket as the loop reads and flushes.
#[derive(Debug)]
pub struct Sock {
    tcp: mio::net::TcpStream,
    tls: Option<Box<rustls::ServerConnection>>,
    /// TLS: the last read from the socket was short (it was drained then).
    short: bool,
    /// TLS: plaintext bytes decrypted and not yet read.
    buffered: usize,
}

/// The socket as rustls reads it, noting whether a read was short.
struct Noting<'a> {
    tcp: &'a mut mio::net::TcpStream,
    short: bool,
}

impl Read for Noting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.tcp.read(buf)?;
        self.short = n < buf.len();
        Ok(n)
    }
}

impl Sock {
    /// A plain socket.
    pub fn plain(tcp: mio::net::TcpStream) -> Sock {
        Sock {
            tcp,
            tls: None,
            short: false,
            buffered: 0,
        }
    }

    /// A socket accepted on the TLS port (or the bus's, with `tls-cluster`).
    pub fn tls(tcp: mio::net::TcpStream, config: &Arc<rustls::ServerConfig>) -> io::Result<Sock> {
        let conn = rustls::ServerConnection::new(config.clone()).map_err(io::Error::other)?;
        Ok(Sock {
            tcp,
            tls: Some(Box::new(conn)),
            short: false,
            buffered: 0,
        })
    }

    /// The TCP socket under it.
    pub fn tcp(&self) -> &mio::net::TcpStream {
        &self.tcp
    }

    /// True when a short read means nothing more waits: always for a plain socket;
    /// for TLS, when the last read from the socket was short and every byte it
    /// decrypted was read (records may hold less plaintext than asked for).
    pub fn drained(&self) -> bool {
        self.tls.is_none() || (self.short && self.buffered == 0)
    }

    /// TLS records wait to be written (the socket took less than they came to).
    pub fn pending(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Writes the waiting TLS records while the socket takes them.
    pub fn flush_pending(&mut self) -> io::Result<()> {
        let Some(t) = self.tls.as_mut() else {
            return Ok(());
        };
        while t.wants_write() {
            match t.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(t) = self.tls.as_mut() else {
            return self.tcp.read(buf);
        };
        loop {
            match t.reader().read(buf) {
                Ok(n) => {
                    self.buffered = self.buffered.saturating_sub(n);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.buffered = 0,
                Err(e) => return Err(e),
            }
            // No plaintext waits: more records from the socket (WouldBlock when none).
            let mut from = Noting {
                tcp: &mut self.tcp,
                short: false,
            };
            let got = t.read_tls(&mut from);
            self.short = from.short;
            if got? == 0 {
                return Ok(0);
            }
            let processed = t.process_new_packets();
            if let Ok(state) = &processed {
                self.buffered = state.plaintext_bytes_to_read();
            }
            // The handshake's replies, or the alert that ends a bad one.
            while t.wants_write() {
                match t.write_tls(&mut self.tcp) {
                    Ok(n) if n > 0 => {}
                    _ => break,
                }
            }
            if let Err(e) = processed {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.tls.is_none() {
            return self.tcp.write(buf);
        }
        // Flush first: plaintext is taken only while the records before it went out,
        // so what waits in the TLS state stays within one write's worth.
        self.flush_pending()?;
        if self.pending() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let t = self.tls.as_mut().expect("tls");
        let n = t.writer().write(&buf[..buf.len().min(64 * 1024)])?;
        self.flush_pending()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_pending()
    }
}

impl mio::event::Source for Sock {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        self.tcp.register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        self.tcp.reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        self.tcp.deregister(registry)
    }
}
