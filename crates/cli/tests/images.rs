//! Pictures: read_file on a PNG gives a model that sees the image itself, in each wire
//! format; a text-only model gets the text answer; big pictures are scaled down, impossible
//! ones refused with the reason; sessions keep them.

use std::io::Cursor;
use std::process::Command;

use base64::Engine;
use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, run, stderr};

fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([
            (x * 7 % 256) as u8,
            (y * 3 % 256) as u8,
            ((x ^ y) % 256) as u8,
        ])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(picture)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// PNG's CRC-32, to keep an edited header valid.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffff_u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn reading_model(path: &str) -> MockServer {
    MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({ "file_path": path }).to_string(),
            )))
            .reply(Turn::text("A red square.")),
    )
}

fn write_bytes(env: &Env, name: &str, bytes: &[u8]) {
    std::fs::write(env.work.join(name), bytes).unwrap();
}

/// The decoded picture of a data URL or base64 payload, and its size.
fn picture_size(media_type: &str, data: &str) -> (u32, u32) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let format = image::ImageFormat::from_mime_type(media_type).unwrap();
    let picture = image::load_from_memory_with_format(&bytes, format).unwrap();
    (picture.width(), picture.height())
}

fn data_url_size(url: &str) -> (u32, u32) {
    let rest = url.strip_prefix("data:").unwrap();
    let (media_type, data) = rest.split_once(";base64,").unwrap();
    picture_size(media_type, data)
}

fn openai(env: &Env, server: &MockServer, model: &str) -> Command {
    let mut cmd = env.rein();
    cmd.env("OPENAI_API_KEY", "sk-test")
        .env("REIN_BASE_URL", server.openai_base_url())
        .env("REIN_MODEL", model);
    cmd
}

#[test]
fn chat_completions_get_the_picture_in_a_user_message_after_the_tool_result() {
    let env = Env::new();
    write_bytes(&env, "shot.png", &png(64, 48));
    let server = reading_model("shot.png");
    let out = run(openai(&env, &server, "gpt-4o").args(["-p", "what is in shot.png?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.requests()[1].body;
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(
        messages[tool]["content"]
            .as_str()
            .unwrap()
            .contains("PNG image, 64×48"),
        "{body}"
    );
    let follow = &messages[tool + 1];
    assert_eq!(follow["role"], "user", "{body}");
    let parts = follow["content"].as_array().unwrap();
    let image = parts.iter().find(|p| p["type"] == "image_url").unwrap();
    assert_eq!(
        data_url_size(image["image_url"]["url"].as_str().unwrap()),
        (64, 48)
    );
}

#[test]
fn anthropic_gets_an_image_block_inside_the_tool_result() {
    let env = Env::new();
    write_bytes(&env, "shot.png", &png(64, 48));
    let server = reading_model("shot.png");
    let out = run(env
        .rein()
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("REIN_BASE_URL", server.base_url())
        .env("REIN_MODEL", "claude-sonnet-4-5")
        .args(["-p", "what is in shot.png?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.requests()[1].body;
    let result = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    let blocks = result["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "text");
    let image = blocks.iter().find(|b| b["type"] == "image").unwrap();
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(
        picture_size("image/png", image["source"]["data"].as_str().unwrap()),
        (64, 48)
    );
}

#[test]
fn the_responses_api_gets_an_input_image() {
    let env = Env::new();
    write_bytes(&env, "shot.png", &png(64, 48));
    let server = reading_model("shot.png");
    let out = run(openai(&env, &server, "gpt-5").args([
        "--provider",
        "openai-responses",
        "-p",
        "what is in shot.png?",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.requests()[1].body;
    let input = body["input"].as_array().unwrap();
    let output = input
        .iter()
        .position(|i| i["type"] == "function_call_output")
        .unwrap();
    let follow = &input[output + 1];
    assert_eq!(follow["role"], "user", "{body}");
    let image = follow["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "input_image")
        .unwrap();
    assert_eq!(
        data_url_size(image["image_url"].as_str().unwrap()),
        (64, 48)
    );
}

#[test]
fn a_text_only_model_gets_the_text_answer_and_vision_false_overrides_the_table() {
    for (model, config) in [("deepseek-chat", ""), ("gpt-4o", "vision = false\n")] {
        let env = Env::new();
        std::fs::create_dir_all(&env.rein_home).unwrap();
        std::fs::write(env.rein_home.join("config.toml"), config).unwrap();
        write_bytes(&env, "shot.png", &png(64, 48));
        let server = reading_model("shot.png");
        let out = run(openai(&env, &server, model).args(["-p", "what is in shot.png?"]));
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        let body = server.requests()[1].body.to_string();
        assert!(!body.contains("image_url"), "{model}: {body}");
        assert!(body.contains("does not take images"), "{model}: {body}");
    }
}

#[test]
fn vision_true_lets_an_unknown_model_see() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(env.rein_home.join("config.toml"), "vision = true\n").unwrap();
    write_bytes(&env, "shot.png", &png(8, 8));
    let server = reading_model("shot.png");
    let out = run(openai(&env, &server, "my-local-model").args(["-p", "look"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(server.requests()[1].body.to_string().contains("image_url"));
}

#[test]
fn an_oversized_picture_is_scaled_down_and_an_impossible_one_refused_with_the_reason() {
    let env = Env::new();
    write_bytes(&env, "big.png", &png(2352, 750));
    let server = reading_model("big.png");
    let out = run(openai(&env, &server, "gpt-4o").args(["-p", "look"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.requests()[1].body;
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("scaled down from 2352×750"),
        "{tool}"
    );
    let url = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|p| p["type"] == "image_url")
        .unwrap()["image_url"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(data_url_size(&url), (1568, 500));

    // A header announcing 20000 × 20000 pixels: refused before anything is decoded.
    let env = Env::new();
    let mut huge = png(1, 1);
    huge[16..20].copy_from_slice(&20_000u32.to_be_bytes());
    huge[20..24].copy_from_slice(&20_000u32.to_be_bytes());
    let crc = crc32(&huge[12..29]);
    huge[29..33].copy_from_slice(&crc.to_be_bytes());
    write_bytes(&env, "huge.png", &huge);
    let server = reading_model("huge.png");
    let out = run(openai(&env, &server, "gpt-4o").args(["-p", "look"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.requests()[1].body.clone();
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    let text = tool["content"].as_str().unwrap();
    assert!(
        text.contains("20000×20000") && text.contains("megapixels"),
        "{text}"
    );
    assert!(!body.to_string().contains("image_url"));
}

#[test]
fn a_resumed_session_sends_the_picture_again_stored_once() {
    let env = Env::new();
    write_bytes(&env, "shot.png", &png(64, 48));
    let server = reading_model("shot.png");
    let out = run(openai(&env, &server, "gpt-4o").args(["-p", "look"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let files = env.session_files();
    let saved = std::fs::read_to_string(&files[0]).unwrap();
    let first = server.requests()[1].body.to_string();
    let url_start = first.find("data:image/png;base64,").unwrap();
    let payload: String = first[url_start + 22..]
        .chars()
        .take_while(|c| *c != '"')
        .collect();
    assert_eq!(
        saved.matches(&payload).count(),
        1,
        "the bytes are in the session once"
    );

    let server = MockServer::start(Script::new().reply(Turn::text("Still a square.")));
    let out = run(openai(&env, &server, "gpt-4o").args(["-c", "-p", "and now?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body: Value = server.requests()[0].body.clone();
    assert!(
        body.to_string().contains(&payload),
        "the picture is sent again"
    );
}

#[test]
fn an_at_image_in_the_repl_goes_with_the_request_as_a_picture() {
    let env = Env::new();
    write_bytes(&env, "shot.png", &png(64, 48));
    let server = MockServer::start(Script::new().reply(Turn::text("a gradient")));
    let mut pty = crate::pty::Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("what is @shot.png showing?\r");
    pty.wait_for("a gradient");
    let body = &server.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    let parts = user["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{user}"));
    let text = parts.iter().find(|p| p["type"] == "text").unwrap()["text"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("what is @shot.png showing?"), "{text}");
    assert!(text.contains("PNG image, 64×48"), "{text}");
    let image = parts.iter().find(|p| p["type"] == "image_url").unwrap();
    assert_eq!(
        data_url_size(image["image_url"]["url"].as_str().unwrap()),
        (64, 48)
    );
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}
