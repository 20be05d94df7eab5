"""A capsule's manifest: `model` (the typed `Capsule`), `reader` (`load_capsule`, the checks),
and the safe YAML reading every YAML file goes through (`located_yaml`, `yaml_loader`,
`problems`, `yaml_section`). Importers name the module they use."""
