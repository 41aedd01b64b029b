import ts from "typescript";
import fs from "node:fs";
import path from "node:path";
const roots = process.argv.slice(2);
const files = [];
const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) { if (e.name !== "node_modules" && e.name !== "test" && e.name !== "dist") walk(p); } else if (p.endsWith(".ts") && !p.endsWith(".test.ts") && !p.endsWith(".d.ts")) files.push(p); } };
roots.forEach(walk);
for (const f of files) {
  const sf = ts.createSourceFile(f, fs.readFileSync(f, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (ts.isFunctionLike(n) && n.body) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart()).line, b = sf.getLineAndCharacterOfPosition(n.end).line;
      const len = b - a + 1;
      if (len > 60) { let name = n.name?.getText() ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name.getText() : ts.isPropertyAssignment(n.parent)? n.parent.name.getText() : "(anon)"); console.log(len, f + ":" + (a+1), name); }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
