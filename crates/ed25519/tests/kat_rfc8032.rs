//! RFC 8032 section 7.1 known-answer vectors (Ed25519: TEST 1, 2, 3, 1024 and SHA(abc)),
//! typed in from the RFC. Each must verify in every mode and through every `verify_many`
//! backend, the public key must follow from the secret key, and any one-bit change of
//! the signature, the public key or the message must be rejected in every mode.

use curve25519_dalek::edwards::CompressedEdwardsY;
use ed25519_dalek::Signer;
use sha2::{Digest, Sha512};
use wirespeed_ed25519::serial::vartime_basepoint_mul;
use wirespeed_ed25519::{verify, verify_many_with, Item, Lanes, Mode};
use wirespeed_field::Scalar;

struct Vector {
    name: &'static str,
    secret: &'static str,
    public: &'static str,
    message: &'static str,
    signature: &'static str,
}

/// TEST 1024's 1023-byte message.
const MSG_1024: &str = concat!(
    "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1",
    "e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d",
    "658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a",
    "7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e",
    "06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc10",
    "3b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1",
    "85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d",
    "502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270",
    "88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089b",
    "eccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba",
    "b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969b",
    "e3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7",
    "51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988d",
    "cda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df",
    "f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7",
    "984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4",
    "88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac09",
    "43bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f",
    "b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f161",
    "0e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d",
    "b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8ca",
    "c60c905c15fc910840b94c00a0b9d0",
);

const VECTORS: [Vector; 5] = [
    Vector {
        name: "TEST 1",
        secret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        public: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        message: "",
        signature: concat!(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155",
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
    },
    Vector {
        name: "TEST 2",
        secret: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        public: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        message: "72",
        signature: concat!(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da",
            "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    },
    Vector {
        name: "TEST 3",
        secret: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        public: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        message: "af82",
        signature: concat!(
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac",
            "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
        ),
    },
    Vector {
        name: "TEST 1024",
        secret: "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
        public: "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
        message: MSG_1024,
        signature: concat!(
            "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350",
            "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"
        ),
    },
    Vector {
        name: "TEST SHA(abc)",
        secret: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
        public: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
        message: concat!(
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a",
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        signature: concat!(
            "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589",
            "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"
        ),
    },
];

struct Decoded {
    name: &'static str,
    secret: [u8; 32],
    public: [u8; 32],
    message: Vec<u8>,
    signature: [u8; 64],
}

fn vectors() -> Vec<Decoded> {
    VECTORS
        .iter()
        .map(|v| Decoded {
            name: v.name,
            secret: hex::decode(v.secret).unwrap().try_into().unwrap(),
            public: hex::decode(v.public).unwrap().try_into().unwrap(),
            message: hex::decode(v.message).unwrap(),
            signature: hex::decode(v.signature).unwrap().try_into().unwrap(),
        })
        .collect()
}

#[test]
fn vectors_are_typed_correctly() {
    // The SHA(abc) message is SHA-512("abc"), and the TEST 1024 message has 1023 bytes.
    let v = vectors();
    assert_eq!(v[3].message.len(), 1023);
    assert_eq!(v[4].message[..], Sha512::digest(b"abc")[..]);
    // An independent signer reproduces every public key and signature from the secret.
    for v in &v {
        let sk = ed25519_dalek::SigningKey::from_bytes(&v.secret);
        assert_eq!(sk.verifying_key().to_bytes(), v.public, "{}", v.name);
        assert_eq!(sk.sign(&v.message).to_bytes(), v.signature, "{}", v.name);
    }
}

#[test]
fn public_key_follows_from_secret() {
    // RFC 8032 5.1.5: a = clamp(SHA-512(secret)[..32]); A = [a]B. [a]B = [a mod L]B.
    for v in vectors() {
        let h = Sha512::digest(v.secret);
        let mut a: [u8; 32] = h[..32].try_into().unwrap();
        a[0] &= 248;
        a[31] &= 127;
        a[31] |= 64;
        let point = vartime_basepoint_mul(&Scalar::from_bytes_mod_order(&a));
        assert_eq!(point.compress(), v.public, "{}", v.name);
        // And the encoding decodes to the same point in an independent implementation.
        let theirs = CompressedEdwardsY(v.public).decompress().unwrap();
        assert_eq!(theirs.compress().to_bytes(), v.public, "{}", v.name);
    }
}

#[test]
fn every_vector_verifies_in_every_mode() {
    let v = vectors();
    for v in &v {
        for mode in Mode::ALL {
            assert_eq!(
                verify(&v.message, &v.signature, &v.public, mode),
                Ok(()),
                "{} in mode {mode}",
                v.name
            );
        }
    }
    let items: Vec<Item> = v
        .iter()
        .map(|v| Item {
            msg: &v.message,
            sig: &v.signature,
            pk: &v.public,
        })
        .collect();
    for backend in std::iter::once(Lanes::Auto).chain(Lanes::CONCRETE) {
        for mode in Mode::ALL {
            let got =
                verify_many_with(&items, mode, backend, wirespeed_ed25519::CpuFeatures::get());
            assert_eq!(got, vec![Ok(()); items.len()], "{mode} {backend:?}");
        }
    }
}

fn assert_rejected_everywhere(name: &str, what: &str, msg: &[u8], sig: &[u8], pk: &[u8]) {
    for mode in Mode::ALL {
        assert!(
            verify(msg, sig, pk, mode).is_err(),
            "{name}: {what} accepted in mode {mode}"
        );
    }
}

#[test]
fn every_signature_bit_flip_fails() {
    for v in vectors() {
        for bit in 0..512 {
            let mut sig = v.signature;
            sig[bit / 8] ^= 1 << (bit % 8);
            assert_rejected_everywhere(
                v.name,
                &format!("signature bit {bit}"),
                &v.message,
                &sig,
                &v.public,
            );
        }
    }
}

#[test]
fn every_public_key_bit_flip_fails() {
    for v in vectors() {
        for bit in 0..256 {
            let mut pk = v.public;
            pk[bit / 8] ^= 1 << (bit % 8);
            assert_rejected_everywhere(
                v.name,
                &format!("key bit {bit}"),
                &v.message,
                &v.signature,
                &pk,
            );
        }
    }
}

#[test]
fn message_bit_flips_and_length_changes_fail() {
    for v in vectors() {
        let bits = v.message.len() * 8;
        // Every bit of short messages, a spread of bits (first, last, every 61st) of long ones.
        let positions: Vec<usize> = if bits <= 512 {
            (0..bits).collect()
        } else {
            (0..bits)
                .filter(|b| b % 61 == 0 || *b == bits - 1)
                .collect()
        };
        for bit in positions {
            let mut msg = v.message.clone();
            msg[bit / 8] ^= 1 << (bit % 8);
            assert_rejected_everywhere(
                v.name,
                &format!("message bit {bit}"),
                &msg,
                &v.signature,
                &v.public,
            );
        }
        let mut longer = v.message.clone();
        longer.push(0);
        assert_rejected_everywhere(
            v.name,
            "message + one zero byte",
            &longer,
            &v.signature,
            &v.public,
        );
        if !v.message.is_empty() {
            let shorter = &v.message[..v.message.len() - 1];
            assert_rejected_everywhere(
                v.name,
                "message - last byte",
                shorter,
                &v.signature,
                &v.public,
            );
        }
    }
}
