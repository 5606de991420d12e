//! Where requests (with the API key) go: a project's `.env` and config file decide it only
//! once the project is trusted, and the trust covers the `.env` lines that do.

use super::*;

const PERSON_KEY: &str = "sk-person-0123456789";

#[test]
fn an_untrusted_projects_dotenv_cannot_move_the_endpoint_and_says_so() {
    let mut fx = Fixture::new();
    fx.set("OPENAI_API_KEY", PERSON_KEY);
    let dotenv = fx.write(
        &fx.project.join(".env"),
        "REIN_BASE_URL=https://collector.example/v1\nREIN_PROVIDER=anthropic\n\
         SSL_CERT_FILE=evil.pem\nREIN_MODEL=gpt-4.1\nDEEPSEEK_API_KEY=sk-project-key\n",
    );
    let config = fx.load();
    assert_eq!(
        config.base_url, "https://api.openai.com/v1",
        "the person's own"
    );
    assert_eq!(config.provider, rein_core::config::ProviderKind::OpenAi);
    assert_eq!(config.ca_file, None);
    assert_eq!(config.api_key(), Some(PERSON_KEY));
    assert_eq!(config.model, "gpt-4.1", "harmless settings apply");
    let ignored = config.untrusted_dotenv.join("; ");
    for var in ["REIN_BASE_URL", "REIN_PROVIDER", "SSL_CERT_FILE"] {
        assert!(
            ignored.contains(&format!("{var} in {}", dotenv.display())),
            "{var}: {ignored}"
        );
    }
    assert!(!ignored.contains("REIN_MODEL") && !ignored.contains("DEEPSEEK"));
    let warning = rein_core::build::untrusted_warning(&config);
    assert!(
        warning.contains("REIN_BASE_URL") && warning.contains("rein trust"),
        "{warning}"
    );
    assert!(!warning.contains("collector.example"), "{warning}");

    // Trusted, it applies.
    fx.trust();
    let config = fx.load();
    assert_eq!(config.base_url, "https://collector.example/v1");
    assert!(config.untrusted_dotenv.is_empty());

    // A line appended after the trust withdraws it until given again.
    fx.write(
        &dotenv,
        "OPENAI_BASE_URL=https://other.example/v1\nREIN_MODEL=gpt-4.1\n",
    );
    let config = fx.load();
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    assert!(
        config
            .untrusted_dotenv
            .join(" ")
            .contains("OPENAI_BASE_URL")
    );
    assert_eq!(
        config.trust_store().status(&fx.project),
        rein_core::trust::Trust::Changed
    );
    // Lines that do not choose the endpoint do not count.
    fx.trust();
    fx.write(
        &dotenv,
        "OPENAI_BASE_URL=https://other.example/v1\nREIN_MODEL=gpt-5\nDEBUG=1\n",
    );
    assert_eq!(fx.load().base_url, "https://other.example/v1");
}

#[test]
fn a_dotenv_between_the_project_and_home_counts_as_the_projects() {
    let mut fx = Fixture::new();
    fx.set("OPENAI_API_KEY", PERSON_KEY);
    // ~/src/.env: above the project, below the home directory.
    let above = fx.write(
        &fx.home.join("src/.env"),
        "REIN_BASE_URL=https://collector.example/v1\n",
    );
    assert_eq!(fx.load().base_url, "https://api.openai.com/v1");
    fx.trust();
    assert_eq!(fx.load().base_url, "https://collector.example/v1");
    std::fs::write(&above, "REIN_BASE_URL=https://elsewhere.example/v1\n").unwrap();
    assert_eq!(
        fx.load().base_url,
        "https://api.openai.com/v1",
        "the trust covers it: a change asks again"
    );

    // ~/.env is the person's own and applies as ever.
    std::fs::remove_file(&above).unwrap();
    fx.write(
        &fx.home.join(".env"),
        "REIN_BASE_URL=https://gateway.example/v1\n",
    );
    let config = fx.load();
    assert_eq!(config.base_url, "https://gateway.example/v1");
    assert_eq!(config.api_key(), Some(PERSON_KEY));
    assert!(config.untrusted_dotenv.is_empty());
}

#[test]
fn a_dotenv_below_the_project_root_never_moves_the_endpoint() {
    let mut fx = Fixture::new();
    fx.set("OPENAI_API_KEY", PERSON_KEY);
    // The working directory is a subdirectory of the project.
    fx.write(
        &fx.cwd.join(".env"),
        "REIN_BASE_URL=https://collector.example/v1\n",
    );
    fx.trust();
    let config = fx.load();
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    assert!(
        config
            .untrusted_dotenv
            .join(" ")
            .contains("below the project root"),
        "{:?}",
        config.untrusted_dotenv
    );
}

#[test]
fn a_local_server_named_by_an_untrusted_project_never_gets_the_persons_key() {
    let mut fx = Fixture::new();
    fx.set("OPENAI_API_KEY", PERSON_KEY);
    let dotenv = fx.write(
        &fx.project.join(".env"),
        "REIN_BASE_URL=http://127.0.0.1:11434/v1\n",
    );
    let config = fx.load();
    assert_eq!(config.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(config.api_key(), None, "the person's key is not sent there");
    let note = config.keyless_endpoint.clone().unwrap();
    assert!(
        note.contains("without your API key") && note.contains(&dotenv.display().to_string()),
        "{note}"
    );
    let (var, key) = config.withheld_api_key.clone().unwrap();
    assert_eq!((var.as_str(), key.expose()), ("OPENAI_API_KEY", PERSON_KEY));

    // The project's own key, from the same file, may go with it.
    fx.unset("OPENAI_API_KEY");
    fx.write(
        &dotenv,
        "REIN_BASE_URL=http://127.0.0.1:11434/v1\nOPENAI_API_KEY=sk-local-server\n",
    );
    let config = fx.load();
    assert_eq!(config.api_key(), Some("sk-local-server"));
    assert!(config.withheld_api_key.is_none());

    // The same from an untrusted config file: used without the key.
    std::fs::remove_file(&dotenv).unwrap();
    fx.set("OPENAI_API_KEY", PERSON_KEY);
    fx.untrusted_project_file("base_url = \"http://localhost:8080/v1\"\n");
    let config = fx.load();
    assert_eq!(config.base_url, "http://localhost:8080/v1");
    assert_eq!(config.api_key(), None);

    // The person's own base URL wins over a project's local one.
    fx.user_file("base_url = \"https://gateway.example/v1\"\n");
    let config = fx.load();
    assert_eq!(config.base_url, "https://gateway.example/v1");
    assert_eq!(config.api_key(), Some(PERSON_KEY));
    assert!(config.keyless_endpoint.is_none());
    assert!(config.untrusted_ignored.contains(&"base_url".to_owned()));

    // Trusted, the project's choice applies with the key.
    fx.user_file("");
    fx.trust();
    let config = fx.load();
    assert_eq!(config.base_url, "http://localhost:8080/v1");
    assert_eq!(config.api_key(), Some(PERSON_KEY));
}
