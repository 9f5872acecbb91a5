/**
 * Translation, ai61 (AI translation: up to 2,000 characters into CN, EN or JP, the source detected
 * when not given) and t010 (Hiro translation: up to 65,536 characters between 18 languages, both
 * named). Both answer at once. The sandbox cannot translate, so it writes a stand-in: every word
 * becomes a word of the target language's look (Latin for EN and the European languages, CJK for
 * CN and JP), chosen by a hash of the word, so the same text always translates the same way; numbers,
 * punctuation, line breaks and `[markers]` are kept where they were, so a text's pieces can be
 * checked back in order.
 */
import { hash32 } from '../seeded';
import { json, type OperationHandlers } from './contract';

type TranslationOperations = Pick<OperationHandlers, 'ai61AiTranslation' | 't010HiroTranslationTranslate'>;

const LATIN = [
  'device',
  'layer',
  'housing',
  'signal',
  'surface',
  'member',
  'unit',
  'portion',
  'element',
  'means',
  'control',
  'first',
  'second',
  'wherein',
  'which',
  'is',
  'the',
  'a',
  'of',
  'and',
  'to',
  'with',
  'battery',
  'sensor',
  'lever',
  'spring',
  'notch',
  'frame',
  'module',
  'circuit',
  'value',
  'flow',
];
const CJK = '的一是在了有和装置层壳体信号表面构件单元部分元件控制第二其中电池传感器杆弹簧槽框架模块电路值流';
const KANA = 'のはをにがでとアイウエオカキクケコサシスセソタチツテト';

/** CJK punctuation as a Latin target writes it. */
const LATIN_MARKS: Record<string, string> = {
  '，': ',',
  '、': ',',
  '。': '.',
  '；': ';',
  '：': ':',
  '！': '!',
  '？': '?',
};

/** The stand-in of one word in the target language. */
function wordIn(target: string, word: string): string {
  const h = hash32(target, word);
  if (target === 'zh' || target === 'cn') return `${CJK[h % CJK.length]}${CJK[(h >>> 8) % CJK.length]}`;
  if (target === 'ja' || target === 'jp') return `${CJK[h % CJK.length]}${KANA[(h >>> 8) % KANA.length]}`;
  return LATIN[h % LATIN.length] ?? 'word';
}

/** `text` in the look of `target` (a lower-case code), numbers, punctuation and markers kept. */
export function standInTranslation(text: string, target: string): string {
  const cjkTarget = target === 'zh' || target === 'cn' || target === 'ja' || target === 'jp';
  const words = text.split(/(\[[^\]\n]*\]|\d+(?:[.,]\d+)*|\p{Script=Han}{1,2}|[\p{L}][\p{L}'-]*)/u);
  return words
    .map((part, index) => {
      if (index % 2 === 0) return cjkTarget ? part.replace(/ +/g, '') : part;
      if (/^\[|^\d/.test(part)) return part;
      const translated = wordIn(target, part.toLowerCase());
      return cjkTarget ? translated : ` ${translated}`;
    })
    .join('')
    .replace(/[，、。；：！？]/g, (mark) => (cjkTarget ? mark : `${LATIN_MARKS[mark] ?? mark} `))
    .replace(/ {2,}/g, ' ')
    .replace(/ ([.,;:!?)])/g, '$1')
    .replace(/(^|\n) /g, '$1')
    .trim();
}

/** ai61's guess of the source language: CN for Chinese, JP for kana, else EN. */
function detected(text: string): string {
  if (/[\u3040-\u30ff]/.test(text)) return 'JP';
  if (/\p{Script=Han}/u.test(text)) return 'CN';
  return 'EN';
}

export function createTranslationOperations(): TranslationOperations {
  return {
    ai61AiTranslation: (body) => {
      const target = body.target_lang ?? 'EN';
      const source = body.source_lang?.toUpperCase() ?? detected(body.text);
      return json({
        source_lang: source,
        target_lang: target,
        translate_result: source === target ? body.text : standInTranslation(body.text, target.toLowerCase()),
      });
    },
    t010HiroTranslationTranslate: (body) => {
      const translated = standInTranslation(body.content, body.targetLanguageCode);
      return json({
        state: 'success',
        textTranslated: translated,
        translatedCharacterCount: translated.length,
      });
    },
  };
}
