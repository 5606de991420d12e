//! Which models take images, by name, for when the configuration does not say (`vision`).
//! A model missing here gets text only: an image sent to a model that cannot take it fails
//! the whole request, a picture withheld from one that could costs only the picture.

/// Names (or name parts) of models that take images, lowercase; matched against the model's
/// name without a gateway's `vendor/` prefix. Checked after [`TEXT_ONLY`].
const SEEING: &[&str] = &[
    // Anthropic: every Claude since 3.
    "claude-3",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-4",
    // OpenAI.
    "gpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "o1",
    "o3",
    "o4-mini",
    "chatgpt-4o",
    // Google, xAI, Mistral, Meta, open models.
    "gemini",
    "gemma-3",
    "grok-4",
    "grok-2-vision",
    "pixtral",
    "mistral-small-3.1",
    "mistral-small-3.2",
    "mistral-medium",
    "llama-4",
    "vision",
    "-vl",
    "llava",
    "minicpm-v",
    "moondream",
    "glm-4v",
    "glm-4.5v",
    "internvl",
];

/// Name parts that rule images out even where [`SEEING`] would match (`o1-mini`,
/// `gpt-5-codex-mini` is fine but `o3-mini` is not).
const TEXT_ONLY: &[&str] = &["o1-mini", "o1-preview", "o3-mini", "-embedding", "audio"];

/// Whether `model` is known to take images.
pub fn model_takes_images(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if TEXT_ONLY.iter().any(|part| name.contains(part)) {
        return false;
    }
    SEEING.iter().any(|known| {
        if known.starts_with('-') || *known == "vision" {
            name.contains(known)
        } else {
            name.starts_with(known)
                || name.contains(&format!("-{known}"))
                || name.contains(&format!(".{known}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_knows_the_common_models() {
        for seeing in [
            "claude-sonnet-4-5",
            "claude-3-5-haiku-20241022",
            "anthropic/claude-opus-4.1",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-5",
            "o3",
            "openrouter/google/gemini-2.5-pro",
            "qwen2.5-vl-72b-instruct",
            "llama-3.2-11b-vision-instruct",
            "us.anthropic.claude-3-7-sonnet",
        ] {
            assert!(model_takes_images(seeing), "{seeing}");
        }
        for blind in [
            "deepseek-chat",
            "deepseek-reasoner",
            "gpt-3.5-turbo",
            "gpt-4",
            "o3-mini",
            "o1-mini",
            "qwen2.5-coder-32b",
            "llama3.1",
            "mistral-large",
            "text-embedding-3-small",
        ] {
            assert!(!model_takes_images(blind), "{blind}");
        }
    }
}
