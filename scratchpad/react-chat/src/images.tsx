/**
 * Images in messages: a file input that adds images to the message being
 * composed (shown until it is sent), and the images of a sent message.
 */
import { type ReactTamboThreadMessage, useMessageImages, useTamboThreadInput } from "@tambo-effect/react"
import "./images.css"

export function ImageAttach() {
  const { addImages, images, removeImage } = useTamboThreadInput()
  return (
    <span className="image-attach">
      <label className="attach-image" title="Attach images">
        🖼️
        <input
          type="file"
          accept="image/*"
          multiple
          data-testid="attach-image"
          onChange={(event) => {
            const files = [...(event.target.files ?? [])]
            event.target.value = ""
            if (files.length > 0) addImages(files).catch((failure: unknown) => console.warn("not added", failure))
          }}
        />
      </label>
      {images.map((image) => (
        <span key={image.id} className="staged-image" data-testid="staged-image">
          <img src={image.dataUrl} alt={image.name} />
          <button type="button" aria-label={`Remove ${image.name}`} onClick={() => removeImage(image.id)}>×</button>
        </span>
      ))}
    </span>
  )
}

export function MessageImages({ message }: { readonly message: ReactTamboThreadMessage }) {
  const images = useMessageImages(message)
  return (
    <>
      {images.map((image, index) => (
        <img key={index} className="message-image" data-testid="message-image" src={image.src} alt={image.name ?? "image"} />
      ))}
    </>
  )
}

/** Whether a block is an image (shown by `MessageImages`, not as an attachment). */
export const isImageBlock = (block: { readonly type: string; readonly resource?: { readonly mimeType?: string } }) =>
  block.type === "resource" && block.resource?.mimeType?.startsWith("image/") === true
