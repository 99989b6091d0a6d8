use super::*;
use schemars::JsonSchema;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Plain {
    A,
    B,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Titled {
    /// First
    A,
    #[schemars(title = "Second")]
    B,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Flat {
    name: String,
    age: Option<u32>,
    plain: Plain,
    titled: Titled,
    many: Vec<Plain>,
    many_titled: Vec<Titled>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    name: String,
    inner: Flat,
}

#[test]
fn a_flat_form_keeps_primitives_and_rewrites_enums() {
    let form = form_schema::<Flat>().unwrap();
    let p = &form["properties"];
    assert_eq!(p["name"]["type"], "string");
    assert_eq!(p["age"]["type"], "integer");
    assert_eq!(p["plain"], json!({"type": "string", "enum": ["A", "B"]}));
    assert_eq!(
        p["titled"]["oneOf"],
        json!([{"const": "A", "title": "First"}, {"const": "B", "title": "Second"}])
    );
    assert_eq!(p["many"]["items"], json!({"type": "string", "enum": ["A", "B"]}));
    assert_eq!(p["many_titled"]["items"]["anyOf"][1]["title"], "Second");
    let required: Vec<&str> = form["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(required.contains(&"name") && !required.contains(&"age"));
}

#[test]
fn a_nested_form_is_refused_naming_the_field() {
    let Err(AskError::BadForm(why)) = form_schema::<Nested>() else {
        panic!("a nested form was accepted");
    };
    assert!(why.contains("field `inner`"), "{why}");
}

#[test]
fn answers_decode_by_action() {
    let accept = Answer::Elicit {
        action: "accept".into(),
        content: Some(
            json!({"name": "Ada", "age": null, "plain": "A", "titled": "B", "many": [], "many_titled": []}),
        ),
    };
    let flat = Elicitation::<Flat>::from_answer(accept)
        .unwrap()
        .accepted()
        .unwrap();
    assert_eq!(flat.name, "Ada");
    let decline = Answer::Elicit {
        action: "decline".into(),
        content: None,
    };
    assert_eq!(
        Elicitation::<Value>::from_answer(decline).unwrap(),
        Elicitation::Decline
    );
    let wrong = Answer::Roots(vec![]);
    assert!(matches!(
        Elicitation::<Value>::from_answer(wrong),
        Err(AskError::Invalid(_))
    ));
}
