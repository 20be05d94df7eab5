"""`murmur-tui new`: the files of a fresh capsule (`capsule`) or of a two-member formation
(`formation`, as `mur new --roster`), the name rule they share (`names`), and writing them
all or nothing (`writer`). Importers name the module they use."""
