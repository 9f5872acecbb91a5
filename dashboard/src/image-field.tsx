/**
 * The field of product images on the design workflows' form: image files chosen (each judged by its
 * first bytes and size as the server would, then held as a `data:` URL) or URLs added, each shown
 * with a thumbnail and a button that removes it. A URL's image is not fetched by the page (its policy
 * allows images of its own origin and `data:` only, and a URL filled in from another job's input
 * would otherwise be fetched on sight): a link opens it in a new tab, at the user's click. What is
 * refused is said beside the field, with what to do instead; the images that pass stay. The field's
 * value is the images as JSON (input-form.ts).
 */
import { useRef, useState } from 'preact/hooks';
import {
  dataUrlOf,
  fileProblem,
  type ImageInput,
  imageBytes,
  imageKindOf,
  imageText,
  largeImageAdvice,
  largestImageAsData,
  urlProblem,
} from './image-input';
import { type FormField, imagesOf, takesManyImages } from './input-form';

/** A file as an image input: its bytes as a `data:` URL of the type its first bytes say. */
async function imageOfFile(file: File, type: 'png' | 'jpeg'): Promise<ImageInput> {
  const dataUrl = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`${file.name} could not be read`));
    reader.readAsDataURL(file);
  });
  return { data: `data:image/${type};base64,${dataUrl.slice(dataUrl.indexOf(',') + 1)}`, name: file.name };
}

/** The images chosen so far, a file's or a URL's, and whether another fits beside them as data. */
function roomFor(images: ImageInput[], size: number): boolean {
  const taken = images.reduce((sum, image) => sum + imageBytes(image), 0);
  return taken + size <= largestImageAsData;
}

export function ImageField(props: {
  field: FormField;
  workflow: string;
  value: string;
  problem: string | undefined;
  onChange: (value: string) => void;
}) {
  const { field, workflow, value, problem, onChange } = props;
  const id = `field-${field.name}`;
  const many = takesManyImages(field);
  const most = many ? (field.schema.maxItems ?? 10) : 1;
  const images = imagesOf(value);
  const [refusals, setRefusals] = useState<string[]>([]);
  const [url, setUrl] = useState('');
  const [said, setSaid] = useState('');
  const fileInput = useRef<HTMLInputElement>(null);
  const set = (next: ImageInput[]) => onChange(next.length ? JSON.stringify(next) : '');

  const choose = async (files: File[]) => {
    const refused: string[] = [];
    let kept = many ? [...images] : [];
    for (const file of files) {
      const head = new Uint8Array(await file.slice(0, 16).arrayBuffer());
      const wrong = fileProblem(file, head, workflow);
      const kind = imageKindOf(head);
      if (wrong || !('type' in kind)) refused.push(wrong ?? `${file.name}: not a PNG or JPEG image`);
      else if (kept.length >= most) refused.push(`${file.name}: ${field.name} takes at most ${most} images`);
      else if (!roomFor(kept, file.size))
        refused.push(
          `${file.name}: with the images chosen before it, the request would be over the job API's 1 MiB: ${largeImageAdvice(workflow, file.name)}`,
        );
      else kept = [...kept, await imageOfFile(file, kind.type)];
    }
    const added = kept.length - (many ? images.length : 0);
    set(kept);
    setRefusals(refused);
    setSaid(
      `${added} ${added === 1 ? 'image' : 'images'} added${refused.length ? `, ${refused.length} refused` : ''}`,
    );
  };
  const addUrl = () => {
    const text = url.trim();
    if (text === '') return;
    const wrong =
      urlProblem(text) ??
      (many && images.length >= most ? `${field.name} takes at most ${most} images` : undefined);
    setRefusals(wrong ? [wrong] : []);
    if (wrong) return;
    set(many ? [...images, { url: text }] : [{ url: text }]);
    setUrl('');
    setSaid(`${text} added`);
  };
  const remove = (index: number) => {
    const name = imageText(images[index]!, index);
    set(images.filter((_, at) => at !== index));
    setSaid(`${name} removed`);
    fileInput.current?.focus();
  };

  const problems = [...(problem ? [problem] : []), ...refusals];
  const describedBy = `${id}-hint${problems.length ? ` ${id}-problem` : ''}`;
  return (
    <div class="field wide image-field">
      <label for={id}>
        {field.name}
        {field.required ? ' (required)' : ''}
      </label>
      <input
        ref={fileInput}
        id={id}
        name={field.name}
        type="file"
        accept="image/png,image/jpeg"
        multiple={many}
        aria-describedby={describedBy}
        aria-invalid={problems.length ? 'true' : undefined}
        onChange={(event) => {
          const input = event.currentTarget;
          const files = [...(input.files ?? [])];
          input.value = '';
          void choose(files);
        }}
      />
      <span id={`${id}-hint`} class="hint">
        {field.hint}
      </span>
      <div class="image-url">
        <label for={`${id}-url`}>Or the URL of {many ? 'an image' : 'the image'}</label>
        <input
          id={`${id}-url`}
          class="image-url-input"
          type="url"
          inputMode="url"
          placeholder="https://…"
          value={url}
          aria-describedby={problems.length ? `${id}-problem` : undefined}
          onInput={(event) => setUrl(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key !== 'Enter') return;
            event.preventDefault();
            addUrl();
          }}
        />
        <button type="button" onClick={addUrl}>
          Add the URL
        </button>
      </div>
      {problems.length ? (
        <div id={`${id}-problem`} class="problem" role="alert">
          {problems.map((line) => (
            <p>{line}</p>
          ))}
        </div>
      ) : null}
      {images.length ? (
        <ul class="image-list" aria-label={`Chosen images (${images.length} of at most ${most})`}>
          {images.map((image, index) => (
            <li class="image-list-item" key={`${index}-${image.name ?? image.url}`}>
              {dataUrlOf(image) ? (
                <img src={dataUrlOf(image)} alt="" width={56} height={56} />
              ) : (
                <span class="image-by-url" aria-hidden="true">
                  URL
                </span>
              )}
              <span class="image-name">{imageText(image, index)}</span>
              {image.url ? (
                <a
                  class="image-open"
                  href={image.url}
                  target="_blank"
                  rel="noopener noreferrer"
                  referrerpolicy="no-referrer"
                >
                  Open<span class="visually-hidden"> {imageText(image, index)} in a new tab</span>
                </a>
              ) : null}
              <button
                type="button"
                aria-label={`Remove ${imageText(image, index)}`}
                onClick={() => remove(index)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <p class="visually-hidden" aria-live="polite">
        {said}
      </p>
    </div>
  );
}
