//! Pictures for models that see: PNG, JPEG, GIF and WebP, recognised by their bytes, sent as
//! they are when they fit the providers' limits, scaled down when they do not, refused (with
//! the reason) when they cannot be made to fit.
//!
//! The limits are the strictest of the APIs rein speaks: Anthropic takes at most 5 MB of
//! base64 per image and scales anything beyond 1568 pixels on its long edge down itself
//! (paying for the bigger upload for nothing); OpenAI takes 20 MB and scales to 2048.

use std::io::Cursor;

use base64::Engine;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Longest edge sent, in pixels.
pub const MAX_IMAGE_EDGE: u32 = 1568;
/// Bytes of an image sent at most: 5 MB once base64.
pub const MAX_IMAGE_BYTES: usize = 3_750_000;
/// Files bigger than this are not read as images at all.
pub const MAX_IMAGE_FILE_BYTES: u64 = 40 * 1024 * 1024;
/// Pixels rein decodes at most to scale a picture (a 10000 × 10000 picture is 400 MB
/// decoded).
const MAX_DECODED_PIXELS: u64 = 64_000_000;

/// An image ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageData {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: &'static str,
    /// The bytes, base64.
    pub data: String,
    /// Width as sent.
    pub width: u32,
    /// Height as sent.
    pub height: u32,
    /// Bytes as sent (before base64).
    pub bytes: u64,
    /// The original size, when it was scaled down.
    pub resized_from: Option<(u32, u32)>,
}

/// The format of a picture, by its first bytes; `None` for anything else.
pub fn sniff(head: &[u8]) -> Option<ImageFormat> {
    match head {
        [0x89, b'P', b'N', b'G', ..] => Some(ImageFormat::Png),
        [0xff, 0xd8, 0xff, ..] => Some(ImageFormat::Jpeg),
        [b'G', b'I', b'F', b'8', ..] => Some(ImageFormat::Gif),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some(ImageFormat::WebP),
        _ => None,
    }
}

/// The media type of a format rein sends.
pub fn media_type(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => "image/png",
    }
}

/// A format's name for people: `PNG`.
pub fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::Gif => "GIF",
        ImageFormat::WebP => "WebP",
        _ => "PNG",
    }
}

/// Why a picture cannot be sent to a model; the text completes "cannot be shown: ...".
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The bytes are not a picture of the format they claim.
    #[error("it is not a readable {format} image: {source}")]
    Unreadable {
        /// The format's name (`PNG`).
        format: &'static str,
        /// What the decoder said.
        source: image::ImageError,
    },
    /// Too many pixels to decode and scale down.
    #[error(
        "it is {width}×{height} pixels ({} megapixels); rein scales pictures of up to {} \
         megapixels down to what models take",
        u64::from(*width) * u64::from(*height) / 1_000_000,
        MAX_DECODED_PIXELS / 1_000_000
    )]
    TooManyPixels {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// Still too many bytes once scaled down as far as rein goes.
    #[error(
        "even scaled down to {width}×{height} it takes {bytes} bytes, more than the \
         {MAX_IMAGE_BYTES} models accept"
    )]
    TooLarge {
        /// The smallest width tried.
        width: u32,
        /// The smallest height tried.
        height: u32,
        /// Its size then.
        bytes: usize,
    },
    /// Image content whose base64 does not decode.
    #[error("its base64 does not decode: {0}")]
    Base64(#[from] base64::DecodeError),
    /// Not one of the formats rein sends.
    #[error("it is not a PNG, JPEG, GIF or WebP picture")]
    UnknownFormat,
    /// Scaled down, it could not be encoded.
    #[error("it could not be encoded again: {0}")]
    Encode(image::ImageError),
}

/// The width and height a picture's header announces.
pub fn dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), ImageError> {
    ImageReader::with_format(Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(unreadable(format))
}

fn unreadable(format: ImageFormat) -> impl FnOnce(image::ImageError) -> ImageError {
    move |source| ImageError::Unreadable {
        format: format_name(format),
        source,
    }
}

/// `bytes` (a picture of `format`) made fit to send: as they are when they fit, else scaled
/// down and encoded again. The error says why it cannot be sent.
pub fn prepare(bytes: &[u8], format: ImageFormat) -> Result<ImageData, ImageError> {
    let (width, height) = dimensions(bytes, format)?;
    if width <= MAX_IMAGE_EDGE && height <= MAX_IMAGE_EDGE && bytes.len() <= MAX_IMAGE_BYTES {
        return Ok(encoded(bytes, media_type(format), width, height, None));
    }
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_DECODED_PIXELS {
        return Err(ImageError::TooManyPixels { width, height });
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODED_PIXELS * 4 + (64 << 20));
    reader.limits(limits);
    let picture = reader.decode().map_err(unreadable(format))?;
    let mut edge = MAX_IMAGE_EDGE;
    // Smaller and smaller until the encoding fits (a noisy photograph may need two steps).
    loop {
        let scaled = picture.thumbnail(edge, edge);
        let (w, h) = (scaled.width(), scaled.height());
        let (out, media) = encode_smallest(&scaled)?;
        if out.len() <= MAX_IMAGE_BYTES {
            return Ok(encoded(&out, media, w, h, Some((width, height))));
        }
        if edge <= 400 {
            let (width, height, bytes) = (w, h, out.len());
            return Err(ImageError::TooLarge {
                width,
                height,
                bytes,
            });
        }
        edge = edge * 3 / 4;
    }
}

/// A picture given as base64 (an MCP tool's image content), made fit to send the same way.
pub fn from_base64(data: &str) -> Result<ImageData, ImageError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim())?;
    let format = sniff(&bytes).ok_or(ImageError::UnknownFormat)?;
    prepare(&bytes, format)
}

/// The picture as PNG when it has transparency or PNG is small enough, else as JPEG.
fn encode_smallest(picture: &DynamicImage) -> Result<(Vec<u8>, &'static str), ImageError> {
    let fail = ImageError::Encode;
    let mut png = Vec::new();
    picture
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(fail)?;
    if png.len() <= MAX_IMAGE_BYTES || picture.color().has_alpha() {
        return Ok((png, "image/png"));
    }
    let mut jpeg = Vec::new();
    DynamicImage::ImageRgb8(picture.to_rgb8())
        .write_to(&mut Cursor::new(&mut jpeg), ImageFormat::Jpeg)
        .map_err(fail)?;
    Ok((jpeg, "image/jpeg"))
}

fn encoded(
    bytes: &[u8],
    media_type: &'static str,
    width: u32,
    height: u32,
    resized_from: Option<(u32, u32)>,
) -> ImageData {
    ImageData {
        media_type,
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        width,
        height,
        bytes: bytes.len() as u64,
        resized_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(picture)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_picture_goes_as_it_is() {
        let bytes = png(40, 30);
        let image = prepare(&bytes, ImageFormat::Png).unwrap();
        assert_eq!(
            (image.width, image.height, image.resized_from),
            (40, 30, None)
        );
        let sent = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap();
        assert_eq!(sent, bytes);
    }

    #[test]
    fn a_big_picture_is_scaled_to_the_edge_limit() {
        let image = prepare(&png(3000, 1500), ImageFormat::Png).unwrap();
        assert_eq!(
            (image.width, image.height),
            (MAX_IMAGE_EDGE, MAX_IMAGE_EDGE / 2)
        );
        assert_eq!(image.resized_from, Some((3000, 1500)));
        assert!(image.bytes as usize <= MAX_IMAGE_BYTES);
    }

    #[test]
    fn formats_are_known_by_their_bytes() {
        assert_eq!(sniff(&png(1, 1)), Some(ImageFormat::Png));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some(ImageFormat::Jpeg));
        assert_eq!(sniff(b"GIF89a"), Some(ImageFormat::Gif));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageFormat::WebP));
        assert_eq!(sniff(b"%PDF-1.7"), None);
    }

    #[test]
    fn garbage_with_a_png_signature_is_refused_with_the_reason() {
        let err = prepare(b"\x89PNG\r\n\x1a\nnot really", ImageFormat::Png)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a readable PNG image"), "{err}");
    }
}
