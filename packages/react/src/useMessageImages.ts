/**
 * `useMessageImages`: the images a message carries, ready for `<img>`.
 *
 * @since 0.2.0
 */
import type { TamboThreadMessage } from "@tambo-effect/client"
import { useMemo } from "react"

/**
 * An image of a message.
 *
 * @since 0.2.0
 * @category Models
 */
export interface MessageImage {
  /** A `data:` URL built from the resource's base64 `blob`, else its `uri`. */
  readonly src: string
  readonly name: string | undefined
  readonly mimeType: string
}

const isImageType = (mimeType: string | undefined): mimeType is string =>
  mimeType !== undefined && mimeType.startsWith("image/")

/**
 * The images of a message: its `resource` blocks of an `image/…` MIME type
 * that carry data (`blob`) or a `uri` — what `useTamboThreadInput`'s images
 * become once sent, and what the API returns for images (an `image_url`
 * stored by the API comes back as a resource of type `image/*` with the URL
 * as `uri`).
 *
 * @since 0.2.0
 * @category Utils
 */
export const messageImages = (message: Pick<TamboThreadMessage, "content">): ReadonlyArray<MessageImage> => {
  const images: Array<MessageImage> = []
  for (const block of message.content) {
    if (block.type !== "resource" || !isImageType(block.resource.mimeType)) continue
    const { blob, mimeType, name, uri } = block.resource
    const src = blob !== undefined && blob !== "" ? `data:${mimeType};base64,${blob}` : uri
    if (src === undefined || src === "") continue
    images.push({ src, name, mimeType })
  }
  return images
}

/**
 * The images of a message (see {@link messageImages}), the same array as
 * long as the message's content is the same.
 *
 * @example
 * ```tsx
 * function UserMessage({ message }: { message: TamboThreadMessage }) {
 *   const images = useMessageImages(message)
 *   return <>{images.map((image) => <img key={image.src} src={image.src} alt={image.name ?? ""} />)}</>
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useMessageImages = (message: Pick<TamboThreadMessage, "content">): ReadonlyArray<MessageImage> => {
  const content = message.content
  return useMemo(() => messageImages({ content }), [content])
}
