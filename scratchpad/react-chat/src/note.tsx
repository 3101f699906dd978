/**
 * An interactable note, always on the page: registered with the model as
 * `Note` (props `{ text }`). The model can rewrite it (the tool
 * `update_component_props_<id>`); the user can edit it, and the next message
 * tells the model what it says now.
 */
import { withTamboInteractable } from "@tambo-effect/react"
import * as Schema from "effect/Schema"
import { useState } from "react"
import "./note.css"

interface NoteProps {
  readonly text: string
  readonly onEdit?: ((text: string) => void) | undefined
}

function NoteView({ onEdit, text }: NoteProps) {
  const [editing, setEditing] = useState(false)
  return (
    <section className="note" data-testid="interactable-note">
      <header>
        <strong>Note</strong>
        <button type="button" data-testid="note-edit" onClick={() => setEditing((on) => !on)}>
          {editing ? "Done" : "Edit"}
        </button>
      </header>
      {editing
        ? (
          <textarea
            data-testid="note-editor"
            aria-label="Note"
            value={text}
            onChange={(event) => onEdit?.(event.target.value)}
          />
        )
        : <p data-testid="note-text">{text}</p>}
    </section>
  )
}

const Note = withTamboInteractable(NoteView, {
  componentName: "Note",
  description: "A short note the user keeps next to the chat. Rewrite it when the user asks you to change their note.",
  propsSchema: Schema.Struct({ text: Schema.String })
})

/** The note's text lives here: the user's edits and the model's both land in it. */
export function NotePanel() {
  const [text, setText] = useState("Buy milk, call Sam.")
  return <Note text={text} onEdit={setText} onPropsUpdate={(props) => setText(String(props["text"] ?? ""))} />
}
