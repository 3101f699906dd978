import type { ResourceContent } from "@tambo-effect/client"

/**
 * An image added to the message being composed, read into a data URL (to
 * show it before it is sent).
 *
 * @since 0.2.0
 * @category Models
 */
export interface StagedImage {
  readonly id: string
  readonly name: string
  /** `data:<type>;base64,<data>`: usable as an `<img src>`. */
  readonly dataUrl: string
  readonly file: File
  readonly size: number
  /** The MIME type, `image/…`. */
  readonly type: string
}

let counter = 0
const newId = (): string =>
  typeof crypto !== "undefined" && typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `image-${++counter}`

/** Base64 of bytes, in slices: `String.fromCharCode(...all)` overflows the stack on large files. */
const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/**
 * Whether a file is an image, by its MIME type.
 *
 * @since 0.2.0
 * @category Internal
 */
export const isImage = (file: File): boolean => file.type.startsWith("image/")

/**
 * Reads files into staged images.
 *
 * @since 0.2.0
 * @category Internal
 */
export const stageImages = (files: ReadonlyArray<File>): Promise<Array<StagedImage>> =>
  Promise.all(files.map(async (file) => ({
    id: newId(),
    name: file.name,
    dataUrl: `data:${file.type};base64,${base64(new Uint8Array(await file.arrayBuffer()))}`,
    file,
    size: file.size,
    type: file.type
  })))

/**
 * The image as the API takes it in a user message: a `resource` block with
 * its name, MIME type and base64 data.
 *
 * @since 0.2.0
 * @category Internal
 */
export const imageResource = (image: StagedImage): ResourceContent => ({
  type: "resource",
  resource: { name: image.name, mimeType: image.type, blob: image.dataUrl.slice(image.dataUrl.indexOf(",") + 1) }
})
